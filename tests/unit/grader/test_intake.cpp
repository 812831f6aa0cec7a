// Reading the platforms' exports (intake.h): each hand-in with its files, who
// handed it in and when, as the platform wrote them; a malformed export
// refused naming the file and entry; a submission without its metadata (or
// metadata without its submission) reported, the rest read.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "platforms/intake.h"

using namespace cudalab;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system's temporary one, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / ("cudalab-intake-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// As Gradescope writes it (Ruby's YAML: symbol keys, a quoted SID).
const char* kMetadata = R"(submission_1001:
  :submitters:
  - :name: Ada Lovelace
    :sid: '100'
    :email: ada@u.edu
  :created_at: 2026-12-05 23:41:07.123456000 -05:00
  :score: 10.0
  :status: processed
submission_1002:
  :submitters:
  - :name: Bo Pair
    :sid: '200'
    :email: bo@u.edu
  - :name: Cy Pair
    :sid: '201'
    :email: cy@u.edu
  :created_at: 2026-12-06 00:10:00.000000000 -05:00
submission_1003:
  :submitters:
  - :name: Di Gone
    :sid: '300'
    :email: di@u.edu
  :created_at: 2026-12-05 20:00:00.000000000 -05:00
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const IntakeError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A Gradescope export reads as one hand-in per submission, groups with every member",
          "[unit][intake]") {
  TempDir dir("gradescope");
  write(dir.path / "submission_metadata.yml", kMetadata);
  write(dir.path / "submission_1001" / "matmul_tiled.cu", "// ada\n");
  write(dir.path / "submission_1002" / "matmul_tiled.cu", "// bo and cy\n");
  write(dir.path / "submission_9999" / "matmul_tiled.cu", "// nobody knows\n");
  const Intake in = read_export(Platform::gradescope, dir.path, dir.path / "staged");
  REQUIRE(in.handins.size() == 3);
  const HandIn& ada = in.handins[0];
  CHECK(ada.key == "submission_1001");
  CHECK(ada.files == dir.path / "submission_1001");
  CHECK(ada.record.platform == "gradescope");
  CHECK(ada.record.id == "1001");
  CHECK(ada.record.time == "2026-12-05T23:41:07.123-05:00");
  REQUIRE(ada.record.submitters.size() == 1);
  CHECK(ada.record.submitters[0].name == "Ada Lovelace");
  CHECK(ada.record.submitters[0].sid == "100");
  CHECK(ada.record.submitters[0].email == "ada@u.edu");
  CHECK(ada.problem.empty());
  const HandIn& pair = in.handins[1];
  REQUIRE(pair.record.submitters.size() == 2);
  CHECK(pair.record.submitters[1].sid == "201");
  // Listed without its folder: kept, to be a row of 0 with the reason.
  const HandIn& gone = in.handins[2];
  CHECK(gone.files.empty());
  CHECK(gone.problem == "no folder submission_1003/ in the export");
  // A folder without an entry: reported, not graded.
  bool reported = false;
  for (const auto& w : in.warnings) reported |= w.find("submission_9999/ has no entry") != std::string::npos;
  CHECK(reported);
}

TEST_CASE("A malformed Gradescope export is refused naming the file and the entry", "[unit][intake]") {
  const fs::path dir = "/export";
  CHECK(error_of([&] {
          parse_gradescope_metadata("a: [1, 2", "meta.yml", dir);
        }).find("meta.yml: not valid YAML") == 0);
  CHECK(error_of([&] {
          parse_gradescope_metadata("- 1\n- 2\n", "meta.yml", dir);
        }).find("meta.yml: expected a map") == 0);
  CHECK(error_of([&] {
          parse_gradescope_metadata("submission_1:\n  :created_at: 2026-12-05 23:41:07 -05:00\n", "meta.yml",
                                    dir);
        }) == "meta.yml: submission_1: :submitters: is missing or empty (a list of :name:, :sid:, :email:)");
  CHECK(error_of([&] {
          parse_gradescope_metadata("submission_1:\n  :submitters:\n  - :name: A\n    :sid: '1'\n",
                                    "meta.yml", dir);
        }) == "meta.yml: submission_1: :created_at: is missing");
  const std::string bad_time = error_of([&] {
    parse_gradescope_metadata(
        "submission_1:\n  :submitters:\n  - :name: A\n    :sid: '1'\n  :created_at: soon\n", "meta.yml", dir);
  });
  CHECK(bad_time.find("meta.yml: submission_1: :created_at:: 'soon' is not a date-time") == 0);
  CHECK(error_of([&] {
          parse_gradescope_metadata(
              "submission_1:\n  :submitters:\n  - :name: A\n  :created_at: 2026-12-05 "
              "23:41:07 -05:00\n",
              "meta.yml", dir);
        }) == "meta.yml: submission_1: submitter 1 (A) has neither :sid: nor :email:");
  CHECK(error_of([&] { parse_gradescope_metadata("other: 1\n", "meta.yml", dir); }) ==
        "meta.yml: other: not a submission_<id> entry");
  // No metadata at all: not a Gradescope export.
  TempDir empty("gradescope-empty");
  CHECK(error_of([&] {
          read_export(Platform::gradescope, empty.path, empty.path / "s");
        }).find("not found") != std::string::npos);
}

TEST_CASE("PrairieLearn's download names split into uid, instance, qid, variant, number, id and file",
          "[unit][intake]") {
  const auto p = parse_prairielearn_name("ada@u.edu_1_lab03_tiling_2_3_4567_matmul_tiled.cu");
  REQUIRE(p);
  CHECK(p->owner == "ada@u.edu");
  CHECK(p->instance == "1");
  CHECK(p->qid == "lab03_tiling");
  CHECK(p->variant == "2");
  CHECK(p->submission_number == "3");
  CHECK(p->submission_id == "4567");
  CHECK(p->name == "matmul_tiled.cu");
  const auto q = parse_prairielearn_name("my_group_2_hw3_1_1_99_a.cu");
  REQUIRE(q);
  CHECK(q->owner == "my_group");
  CHECK(q->qid == "hw3");
  CHECK(q->name == "a.cu");
  CHECK_FALSE(parse_prairielearn_name("matmul_tiled.cu"));
  CHECK_FALSE(parse_prairielearn_name("ada_1_q_1_1_x"));
}

TEST_CASE(
    "A PrairieLearn download is staged per student, each question's final submission, with the CSV's "
    "names and dates",
    "[unit][intake]") {
  TempDir dir("prairielearn");
  const fs::path zip = dir.path / "Homework3";
  write(zip / "ada@u.edu_1_lab03_tiling_1_1_500_matmul_tiled.cu", "// first\n");
  write(zip / "ada@u.edu_1_lab03_tiling_2_1_510_matmul_tiled.cu", "// final\n");
  write(zip / "bo@u.edu_1_lab03_tiling_1_1_520_matmul_tiled.cu", "// bo\n");
  write(zip / "readme.txt", "not a download\n");
  write(dir.path / "Homework3_final_submissions.csv",
        "UID,UIN,Username,Name,Role,Assessment,Assessment instance,Zone number,Zone title,Question,"
        "Question instance,Variant,Seed,Params,True answer,Options,submission_id,Submission date\n"
        "ada@u.edu,100,,Ada L,Student,Homework "
        "3,1,1,Z,lab03_tiling,1,1,s,{},{},{},500,2026-12-05T10:00:00-05:00\n"
        "ada@u.edu,100,,Ada L,Student,Homework "
        "3,1,1,Z,lab03_tiling,1,2,s,{},{},{},510,2026-12-06T01:00:00-05:00\n"
        "bo@u.edu,200,,\"Bo, Jr.\",Student,Homework 3,1,1,Z,lab03_tiling,1,1,s,{},{},{},520,"
        "2026-12-05T09:00:00-05:00\n");
  const fs::path staged = dir.path / "out" / "staged";
  const Intake in = read_export(Platform::prairielearn, dir.path, staged);
  REQUIRE(in.handins.size() == 2);
  const HandIn& ada = in.handins[0];
  CHECK(ada.key == "ada@u.edu_1");
  CHECK(ada.files == staged / "ada@u.edu_1");
  CHECK(fs::exists(staged / "ada@u.edu_1" / "matmul_tiled.cu"));
  std::ifstream f(staged / "ada@u.edu_1" / "matmul_tiled.cu");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(text == "// final\n");
  REQUIRE(ada.questions.size() == 1);
  CHECK(ada.questions[0].qid == "lab03_tiling");
  CHECK(ada.questions[0].instance == "1");
  CHECK(ada.questions[0].submission_id == "510");
  CHECK(ada.record.time == "2026-12-06T01:00:00-05:00");
  REQUIRE(ada.record.submitters.size() == 1);
  CHECK(ada.record.submitters[0].login == "ada@u.edu");
  CHECK(ada.record.submitters[0].sid == "100");
  CHECK(ada.record.submitters[0].name == "Ada L");
  CHECK(in.handins[1].record.submitters[0].name == "Bo, Jr.");
  bool reported = false;
  for (const auto& w : in.warnings) reported |= w.find("readme.txt") != std::string::npos;
  CHECK(reported);
}

TEST_CASE("GitHub Classroom repositories read with the grades CSV's logins, roster ids and times",
          "[unit][intake]") {
  TempDir dir("classroom");
  const fs::path subs = dir.path / "hw3-submissions";
  write(subs / "hw3-ada" / "labs" / "03_tiling" / "matmul_tiled.cu", "// ada\n");
  write(subs / "hw3-team1" / "matmul_tiled.cu", "// team\n");
  write(subs / "hw3-stray" / "x.cu", "// not in the CSV\n");
  write(dir.path / "hw3-grades.csv",
        "assignment_name,assignment_url,starter_code_url,github_username,roster_identifier,student_"
        "repository_name,"
        "student_repository_url,submission_timestamp,points_awarded,points_available,group_name\n"
        "hw3,https://c/a,https://c/s,ada,ada@u.edu,hw3-ada,https://g/hw3-ada,2026-12-06 04:00:00 UTC,3,10,\n"
        "hw3,https://c/a,https://c/s,bo,bo@u.edu,hw3-team1,https://g/hw3-team1,2026-12-06 05:00:00 "
        "UTC,0,10,team1\n"
        "hw3,https://c/a,https://c/s,cy,cy@u.edu,hw3-team1,https://g/hw3-team1,2026-12-06 05:00:00 "
        "UTC,0,10,team1\n"
        "hw3,https://c/a,https://c/s,di,di@u.edu,,,,0,10,\n");
  const Intake in = read_export(Platform::classroom, dir.path, dir.path / "staged");
  REQUIRE(in.handins.size() == 3);
  const HandIn& ada = in.handins[0];
  CHECK(ada.key == "hw3-ada");
  CHECK(ada.files == subs / "hw3-ada");
  CHECK(ada.record.time == "2026-12-06T04:00:00+00:00");
  CHECK(ada.record.submitters[0].login == "ada");
  CHECK(ada.record.submitters[0].sid == "ada@u.edu");
  const HandIn& team = in.handins[1];
  CHECK(team.key == "hw3-team1");
  CHECK(team.group == "team1");
  REQUIRE(team.record.submitters.size() == 2);
  CHECK(team.record.submitters[1].login == "cy");
  REQUIRE(team.platform_rows.size() == 2);
  const HandIn& di = in.handins[2];
  CHECK(di.files.empty());
  CHECK(di.problem == "did not accept the assignment (no repository)");
  bool reported = false;
  for (const auto& w : in.warnings) reported |= w.find("hw3-stray/ is not in") != std::string::npos;
  CHECK(reported);

  // Without the CSV: the login from the repository's name, and no time (so no late rule).
  fs::remove(dir.path / "hw3-grades.csv");
  const Intake bare = read_export(Platform::classroom, subs, dir.path / "staged");
  REQUIRE(bare.handins.size() == 3);
  CHECK(bare.handins[0].record.submitters[0].login == "ada");
  CHECK(bare.handins[0].record.time.empty());
}

TEST_CASE("CSV cells may hold commas, quotes and line breaks", "[unit][intake]") {
  const auto rows = parse_csv(
      "\xEF\xBB\xBF"
      "a,b\r\n\"x, y\",\"say \"\"hi\"\"\nthere\"\n\n1,\n");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"a", "b"});
  CHECK(rows[1] == std::vector<std::string>{"x, y", "say \"hi\"\nthere"});
  CHECK(rows[2] == std::vector<std::string>{"1", ""});
  CHECK(safe_name("../a b") == "_.._a_b");
  CHECK(safe_name("ada@u.edu") == "ada@u.edu");
  CHECK(safe_name("") == "_");
}

TEST_CASE("PrairieLearn's files staged again are left as they are, and a file no longer final goes",
          "[unit][intake]") {
  TempDir dir("prairielearn-again");
  write(dir.path / "ada_1_q_1_1_7_a.cu", "// a\n");
  write(dir.path / "ada_1_q_1_1_7_b.cu", "// b\n");
  const fs::path staged = dir.path / "out" / "staged";
  read_export(Platform::prairielearn, dir.path, staged);
  const auto when = fs::last_write_time(staged / "ada_1" / "a.cu");
  // A Slurm task reads the export again while another grades from the folder.
  fs::last_write_time(staged / "ada_1" / "a.cu", when - std::chrono::hours(1));
  fs::remove(dir.path / "ada_1_q_1_1_7_b.cu");
  const Intake again = read_export(Platform::prairielearn, dir.path, staged);
  CHECK(fs::last_write_time(staged / "ada_1" / "a.cu") == when - std::chrono::hours(1));
  CHECK_FALSE(fs::exists(staged / "ada_1" / "b.cu"));
  REQUIRE(again.handins.size() == 1);
  CHECK(again.handins[0].questions[0].files == std::vector<std::string>{"a.cu"});
}
