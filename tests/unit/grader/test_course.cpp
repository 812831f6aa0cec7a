// The course file's assignments (grader/core/course.h): what a course hands out
// together, and what grading one of them leaves of the course.
#include <catch2/catch.hpp>

#include "core/course.h"

using namespace cudalab;

namespace {
const std::vector<std::string> kLabs = {"01_coalescing", "02_naive_matmul", "03_tiling", "04_transpose"};
const std::string kCourse = "[course]\ntitle = \"t\"\n[weights]\n03_tiling = 2\n04_transpose = 0.5\n";
CourseSpec course(const std::string& assignments) {
  return parse_course(kCourse + assignments, "course.toml", kLabs);
}
}  // namespace

TEST_CASE(
    "A course declares its assignments: a name, its labs in the course's order, a due date and a late rule",
    "[course][grader]") {
  const CourseSpec c = course(
      "[[assignment]]\nname = \"hw1\"\nlabs = [\"02_naive_matmul\", \"01_coalescing\"]\n"
      "[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\ndue = 2026-12-05T23:59:00-05:00\n"
      "late = { per_day = 0.1, max_days = 3 }\n");
  REQUIRE(c.assignments.size() == 2);
  CHECK(c.assignments[0].labs == std::vector<std::string>{"01_coalescing", "02_naive_matmul"});
  CHECK(c.assignments[0].due.empty());
  const Assignment* hw3 = c.find_assignment("hw3");
  REQUIRE(hw3);
  CHECK(hw3->due == "2026-12-05T23:59:00-05:00");
  CHECK(hw3->late_per_day == Approx(0.1));
  CHECK(hw3->late_max_days == 3);
  CHECK_FALSE(c.find_assignment("hw2"));
  CHECK(c.labs == kLabs);  // the course itself still grades every lab
}

TEST_CASE("Grading an assignment leaves its labs alone, with their weights", "[course][grader]") {
  const CourseSpec c = course("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\n");
  const CourseSpec hw3 = select_assignment(c, "hw3");
  CHECK(hw3.labs == std::vector<std::string>{"03_tiling"});
  CHECK(hw3.assignment == "hw3");
  CHECK(hw3.weight("03_tiling") == 2);
  CHECK(hw3.weights.count("04_transpose") == 0);
  CHECK_THROWS_WITH(select_assignment(c, "hw9"),
                    Catch::Contains("no assignment 'hw9'") && Catch::Contains("assignments: hw3"));
  CHECK_THROWS_WITH(select_assignment(course(""), "hw3"), Catch::Contains("declares none"));
}

TEST_CASE("A mistake in an assignment is named with its line", "[course][grader]") {
  const auto refused = [](const std::string& text, const std::string& says) {
    INFO(text);
    CHECK_THROWS_WITH(course(text), Catch::Contains(says));
  };
  refused("[[assignment]]\nname = \"hw 3\"\nlabs = [\"03_tiling\"]\n", "name must be letters");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = []\n", "labs must list at least one lab");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"05_reduction\"]\n", "not one of the course's labs");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\", \"03_tiling\"]\n", "listed twice");
  refused(
      "[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\n[[assignment]]\nname = \"hw3\"\nlabs = "
      "[\"04_transpose\"]\n",
      "declared twice");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\ndue = \"friday\"\n",
          "due must be a TOML date-time");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\ndue = 2026-12-05T23:59:00\n",
          "needs its time zone");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\nlate = { per_day = 0.1, max_days = 3 }\n",
          "late needs a due date");
  refused(
      "[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\ndue = 2026-12-05T23:59:00Z\nlate = { per_day "
      "= 2, "
      "max_days = 3 }\n",
      "late.per_day must be");
  refused(
      "[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\ndue = 2026-12-05\nlate = { per_day = 0.1, "
      "max_days = 3 }\n",
      "a late rule needs due as a date-time with its time zone");
  refused("[[assignment]]\nname = \"hw3\"\nlabs = [\"03_tiling\"]\npoints = 5\n", "unknown field 'points'");
  refused("[assignment]\nname = \"hw3\"\n", "written [[assignment]]");
  CHECK_THROWS_WITH(course("[[assignment]]\nname = \"hw3\"\nlabs = [\"05_reduction\"]\n"),
                    Catch::Contains("course.toml:"));
}

TEST_CASE("A course sets the allowance for a submission's second looks, or keeps the default",
          "[course][grader]") {
  CHECK(course("").words_allowance_s == Approx(kWordsAllowance_s));
  CHECK(course("[grading]\nwords_allowance_s = 20\n").words_allowance_s == Approx(20));
  CHECK(course("[grading]\nwords_allowance_s = 0\n").words_allowance_s == 0);  // no second looks at all
  CHECK_THROWS_WITH(course("[grading]\nwords_allowance_s = -1\n"),
                    Catch::Contains("words_allowance_s must be"));
  CHECK_THROWS_WITH(course("[grading]\nwords_allowance = 20\n"), Catch::Contains("words_allowance_s"));
}
