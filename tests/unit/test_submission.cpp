// Which files of a submission are graded, and which are ignored.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudalab/catch.h"
#include "submission.h"

using namespace cudalab;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("cudalab-sub-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text = "// code\n") const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
  static inline int counter = 0;
};

std::vector<LabSpec> labs() {
  LabSpec a;
  a.id = "03_tiling";
  a.student_files = {"matmul_tiled.cu"};
  a.tests = {"test_tiling.cpp"};
  LabSpec b;
  b.id = "02_naive_matmul";
  b.student_files = {"matmul_naive.cu"};
  b.tests = {"test_naive_matmul.cpp"};
  return {a, b};
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("A submission in repo layout gives each lab its student file") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/02_naive_matmul/matmul_naive.cu");
  const auto plan = plan_submission(d.path, labs());
  REQUIRE(plan.find("03_tiling"));
  CHECK(plan.find("03_tiling")->complete());
  CHECK(plan.find("03_tiling")->found[0].second == d.path / "labs/03_tiling/matmul_tiled.cu");
  CHECK(plan.find("02_naive_matmul")->complete());
  CHECK(plan.ignored.empty());
}

TEST_CASE("A flat submission and one nested one folder deep are both found") {
  TempDir flat, nested;
  flat.write("matmul_tiled.cu");
  nested.write("alice-lab3/matmul_tiled.cu");
  CHECK(plan_submission(flat.path, labs()).find("03_tiling")->complete());
  CHECK(plan_submission(nested.path, labs()).find("03_tiling")->complete());
}

TEST_CASE("A missing student file is reported for its lab only") {
  TempDir d;
  d.write("matmul_tiled.cu");
  const auto plan = plan_submission(d.path, labs());
  CHECK(plan.find("03_tiling")->complete());
  const auto* naive = plan.find("02_naive_matmul");
  CHECK_FALSE(naive->complete());
  CHECK_THAT(naive->missing[0], Catch::Contains("missing matmul_naive.cu"));
}

TEST_CASE("Test files, manifests and other files in a submission are ignored with the reason") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/03_tiling/test_tiling.cpp", "TEST_CASE(\"always passes\") {}");
  d.write("labs/03_tiling/lab.toml", "[lab]\n");
  d.write("notes.txt");
  d.write(".git/config");
  const auto plan = plan_submission(d.path, labs());
  CHECK(mentions(plan.ignored, "labs/03_tiling/test_tiling.cpp: tests always come from the course"));
  CHECK(mentions(plan.ignored, "labs/03_tiling/lab.toml: the course's lab.toml is used"));
  CHECK(mentions(plan.ignored, "notes.txt: not a student file of any lab"));
  CHECK(mentions(plan.ignored, ".git/: not part of a submission"));
}

TEST_CASE("Of two copies of a file the one in repo layout is graded and the other listed") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu", "// the right one\n");
  d.write("old/matmul_tiled.cu", "// an old one\n");
  const auto plan = plan_submission(d.path, labs());
  CHECK(plan.find("03_tiling")->found[0].second == d.path / "labs/03_tiling/matmul_tiled.cu");
  CHECK(mentions(plan.ignored, "old/matmul_tiled.cu: a second copy of matmul_tiled.cu"));
}

TEST_CASE("A student file over the size limit is not graded") {
  TempDir d;
  d.write("matmul_tiled.cu", std::string(kMaxStudentFileBytes + 1, 'x'));
  const auto plan = plan_submission(d.path, labs());
  const auto* lab = plan.find("03_tiling");
  REQUIRE_FALSE(lab->complete());
  CHECK_THAT(lab->missing[0], Catch::Contains("over the") && Catch::Contains("limit"));
}

TEST_CASE("An empty submission misses every lab's file") {
  TempDir d;
  const auto plan = plan_submission(d.path, labs());
  for (const auto& lab : plan.labs) CHECK_FALSE(lab.complete());
}

TEST_CASE("Odd file names are printed escaped and links are never followed") {
  TempDir d;
  d.write("matmul_tiled.cu");
  d.write(std::string("we\x01ird\xff name.cu"));
  fs::create_symlink("/etc/passwd", d.path / "link.cu");
  const auto plan = plan_submission(d.path, labs());
  CAPTURE(plan.ignored);
  CHECK(mentions(plan.ignored, "we\\x01ird\\xff name.cu"));
  CHECK(mentions(plan.ignored, "link.cu: a symbolic link"));
}

TEST_CASE("Archive names are recognised by their extension") {
  CHECK(is_archive("a.zip"));
  CHECK(is_archive("alice.tar.gz"));
  CHECK(is_archive("b.tgz"));
  CHECK_FALSE(is_archive("matmul_tiled.cu"));
  CHECK_FALSE(is_archive(".zip"));
}
