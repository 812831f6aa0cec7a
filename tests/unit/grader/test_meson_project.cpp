// The grader's one module for Meson and ninja (grader/run/meson_project.h): the
// command lines it builds, what it reads of build.ninja, and ninja's answer
// to `-t query`, on a fabricated build folder (no compiler, no GPU).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cudalab/catch.h"
#include "pipeline/internal.h"
#include "run/meson_project.h"
#include "run/process.h"
#include "run/progress.h"

using namespace cudalab;

namespace fs = std::filesystem;

namespace {

// A build folder with a build.ninja of two outputs, as Meson writes them.
struct FakeBuild {
  fs::path dir;
  FakeBuild() {
    dir = fs::temp_directory_path() / ("cudalab-meson-project-" + std::to_string(::getpid()));
    fs::create_directories(dir / "labs");
    std::ofstream(dir / "build.ninja") << "ninja_required_version = 1.8.2\n"
                                          "rule copy\n"
                                          "  command = cp $in $out\n"
                                          "rule cat2\n"
                                          "  command = cat $in > $out\n"
                                          "build labs/01_x-tests: cat2 a.txt b.txt | c.txt || d.txt\n"
                                          "build harness/cudalab-gpuinfo: copy a.txt\n";
    for (const char* f : {"a.txt", "b.txt", "c.txt", "d.txt"}) std::ofstream(dir / f) << f << "\n";
  }
  ~FakeBuild() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("A folder is configured once Meson wrote its build.ninja", "[meson-project][grader]") {
  const FakeBuild b;
  CHECK(MesonProject(b.dir).configured());
  CHECK_FALSE(MesonProject(b.dir / "labs").configured());
  CHECK_FALSE(MesonProject(b.dir / "no-such-folder").configured());
}

TEST_CASE("A target's output is looked up in build.ninja, folder by folder", "[meson-project][grader]") {
  const FakeBuild b;
  const MesonProject p(b.dir);
  CHECK(p.has_output("labs/01_x-tests"));
  CHECK_FALSE(p.has_output("labs/01_x"));  // a prefix of an output is not one
  CHECK_FALSE(p.has_output("01_x-tests"));
  CHECK(p.output_of("01_x-tests", {"labs", "harness"}) == "labs/01_x-tests");
  CHECK(p.output_of("cudalab-gpuinfo", {"labs", "harness"}) == "harness/cudalab-gpuinfo");
  CHECK(p.output_of("cudalab-gpuinfo", {"labs"}).empty());
  CHECK(p.output_of("harness/cudalab-gpuinfo", {}) == "harness/cudalab-gpuinfo");  // already a path
  CHECK(p.output_of("labs/02_y-tests", {"labs"}).empty());
  CHECK(MesonProject(b.dir / "no-such-folder").output_of("01_x-tests", {"labs"}).empty());
}

TEST_CASE("Meson's compile commands and targets are read as JSON, a missing or broken file as no array",
          "[meson-project][grader]") {
  const FakeBuild b;
  const MesonProject p(b.dir);
  CHECK_FALSE(p.compile_commands().is_array());
  CHECK_FALSE(p.targets().is_array());
  std::ofstream(b.dir / "compile_commands.json")
      << R"([{"file": "../labs/01_x/x.cu", "command": "nvcc -c x.cu", "output": "x.o"}])";
  fs::create_directories(b.dir / "meson-info");
  std::ofstream(b.dir / "meson-info" / "intro-targets.json") << "[{\"name\": \"01_x-tests\"";  // cut short
  const auto db = p.compile_commands();
  REQUIRE(db.is_array());
  REQUIRE(db.size() == 1);
  CHECK(db[0].value("command", "") == "nvcc -c x.cu");
  CHECK_FALSE(p.targets().is_array());
}

TEST_CASE("Meson configures a new folder as a release build, a configured one again with --reconfigure",
          "[meson-project][grader]") {
  const MesonProject p("/b");
  const ProcessOptions fresh = p.setup("/src", {"-Dlabs_dir=/o/labs", "-Dvariants=false"}, false, 300);
  CHECK(fresh.argv == std::vector<std::string>{"meson", "setup", "--buildtype=release", "/b", "/src",
                                               "-Dlabs_dir=/o/labs", "-Dvariants=false"});
  CHECK(fresh.timeout_s == 300);
  const ProcessOptions again = p.setup("/src", {}, true, 600);
  CHECK(again.argv == std::vector<std::string>{"meson", "setup", "--reconfigure", "/b", "/src"});
  CHECK(again.timeout_s == 600);
}

TEST_CASE("Targets are built by ninja with their outputs, by meson compile where an output is unknown",
          "[meson-project][grader]") {
  const MesonProject p("/b");
  const ProcessOptions known =
      p.build({"01_x-tests", "cudalab-gpuinfo"}, {"labs/01_x-tests", "harness/cudalab-gpuinfo"}, 1800);
  CHECK(known.timeout_s == 1800);
  CHECK(known.output_cap == std::size_t(1) << 20);
  if (ninja_program().empty()) {
    CHECK(known.argv ==
          std::vector<std::string>{"meson", "compile", "-C", "/b", "01_x-tests", "cudalab-gpuinfo"});
  } else {
    CHECK(known.argv == std::vector<std::string>{ninja_program().string(), "-C", "/b", "labs/01_x-tests",
                                                 "harness/cudalab-gpuinfo"});
  }
  // One output unknown, or none given: Meson finds the targets by name.
  const std::vector<std::string> by_name = {"meson", "compile", "-C", "/b", "01_x-tests", "02_y-tests"};
  CHECK(p.build({"01_x-tests", "02_y-tests"}, {"labs/01_x-tests", ""}, 60).argv == by_name);
  CHECK(p.build({"01_x-tests", "02_y-tests"}, {}, 60).argv == by_name);
}

TEST_CASE("ninja -t query's inputs are read: explicit, implicit and order-only, not the outputs",
          "[meson-project][grader]") {
  const std::string answer =
      "labs/01_x-tests:\n"
      "  input: cpp_LINKER\n"
      "    labs/01_x-tests.p/main.o\n"
      "    labs/libx-student.a\n"
      "    | harness/libcudalab-harness.a\n"
      "    || labs/gen.h\n"
      "  outputs:\n"
      "    all\n";
  CHECK(query_inputs(answer) == std::vector<std::string>{"labs/01_x-tests.p/main.o", "labs/libx-student.a",
                                                         "harness/libcudalab-harness.a", "labs/gen.h"});
  CHECK(query_inputs("").empty());
  CHECK(query_inputs("ninja: error: unknown target 'x'\n").empty());
}

TEST_CASE("ninja's own answer to a query is read the same", "[meson-project][grader]") {
  if (ninja_program().empty()) {
    WARN("no ninja on PATH: nothing to ask");
    return;
  }
  const FakeBuild b;
  const ProcessOptions q = MesonProject(b.dir).query("labs/01_x-tests");
  CHECK(q.argv == std::vector<std::string>{ninja_program().string(), "-C", b.dir.string(), "-t", "query",
                                           "labs/01_x-tests"});
  const ProcessResult p = run_process(q);
  INFO(p.output);
  REQUIRE(p.ok());
  CHECK(query_inputs(p.output) == std::vector<std::string>{"a.txt", "b.txt", "c.txt", "d.txt"});
}

TEST_CASE("A build through the module runs ninja and builds the target", "[meson-project][grader]") {
  if (ninja_program().empty()) {
    WARN("no ninja on PATH: nothing to ask");
    return;
  }
  const FakeBuild b;
  const MesonProject p(b.dir);
  const ProcessResult r =
      run_process(p.build({"cudalab-gpuinfo"}, {p.output_of("cudalab-gpuinfo", {"labs", "harness"})}, 60));
  INFO(r.output);
  REQUIRE(r.ok());
  CHECK(fs::exists(b.dir / "harness" / "cudalab-gpuinfo"));
}

TEST_CASE(
    "A build's output as it comes has ninja's steps in the form its progress reads, whatever NINJA_STATUS "
    "says",
    "[meson-project][grader]") {
  if (ninja_program().empty()) {
    WARN("no ninja on PATH: nothing to ask");
    return;
  }
  const FakeBuild b;
  const MesonProject p(b.dir);
  // A user's own status format ("%p": a percentage) is not the build's.
  setenv("NINJA_STATUS", "%p ", 1);
  ProcessOptions opt =
      p.build({"01_x-tests", "cudalab-gpuinfo"}, {"labs/01_x-tests", "harness/cudalab-gpuinfo"}, 60);
  unsetenv("NINJA_STATUS");
  std::string seen;
  opt.on_output = [&](std::string_view chunk) { seen += chunk; };
  const ProcessResult r = run_process(opt);
  INFO(r.output);
  REQUIRE(r.ok());
  CHECK(seen == r.output);
  std::vector<NinjaStep> steps;
  std::istringstream in(seen);
  for (std::string line; std::getline(in, line);)
    if (auto s = parse_ninja_status(line)) steps.push_back(*s);
  REQUIRE(steps.size() == 2);
  CHECK(steps.back().finished == 2);
  CHECK(steps.back().total == 2);
}

TEST_CASE("a slot's build folder loses every output of the previous submission and keeps the course's",
          "[meson-project][grader]") {
  FakeBuild b;
  const std::vector<std::string> labs = {"03_tiling", "01_coalescing"};
  // What labs/meson.build makes of a submission's files...
  const std::vector<std::string> student = {"lib03_tiling-student.a",
                                            "lib03_tiling-student.a.p",
                                            "lib03_tiling-student-cpu.a",
                                            "lib03_tiling-student-cpu.a.p",
                                            "cpu-03_tiling-matmul_tiled.cu.cpp",
                                            "03_tiling-tests",
                                            "03_tiling-tests-cpu",
                                            "03_tiling-tests-access",
                                            "03_tiling-tests-access.p",
                                            "01_coalescing-tests"};
  // ...and what the course's part is (the checks, the skeletons in namespace ref).
  const std::vector<std::string> course = {"lib03_tiling-checks.a",
                                           "lib03_tiling-checks-cpu.a.p",
                                           "cpu-ref-03_tiling-02_naive_matmul-matmul_naive.cu.cpp",
                                           "ref-03_tiling-03_tiling-matmul_tiled.cu",
                                           "03_tiling-lab-info.cpp",
                                           "configured-labs.txt",
                                           "02_naive_matmul-tests"};
  for (const auto& n : student) {
    CHECK(student_output(n, labs));
    if (n.size() > 2 && n.compare(n.size() - 2, 2, ".p") == 0) {
      fs::create_directories(b.dir / "labs" / n);
      std::ofstream(b.dir / "labs" / n / "x.o") << "object";
    } else {
      std::ofstream(b.dir / "labs" / n) << "built from a submission";
    }
  }
  for (const auto& n : course) {
    CHECK_FALSE(student_output(n, labs));
    std::ofstream(b.dir / "labs" / n) << "the course's";
  }
  CHECK(clear_student_outputs(b.dir, labs) == student.size());
  for (const auto& n : student) CHECK_FALSE(fs::exists(b.dir / "labs" / n));
  for (const auto& n : course) CHECK(fs::exists(b.dir / "labs" / n));
  CHECK(clear_student_outputs(b.dir, labs) == 0);
}
