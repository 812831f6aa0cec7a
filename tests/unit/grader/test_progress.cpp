// A long step's progress (grader/run/progress.h): ninja's status lines read as a
// count, the time left from the rate, the cadence of a log's lines under a
// clock the test moves, and the terminal's single redrawn line.
#include <string>
#include <vector>

#include "cudalab/catch.h"
#include "run/progress.h"

using namespace cudalab;

namespace {

// A Progress on a clock the test moves, writing into `out`, without the ticker.
struct Watched {
  double t = 0;
  std::vector<std::string> out;
  ProgressOptions options(bool terminal, std::size_t width = 100) {
    ProgressOptions o;
    o.terminal = terminal;
    o.width = width;
    o.ticker = false;
    o.clock = [this] { return t; };
    o.write = [this](const std::string& s) { out.push_back(s); };
    return o;
  }
};

}  // namespace

TEST_CASE("ninja's status lines give the steps finished and the steps in all", "[progress][grader]") {
  const auto s = parse_ninja_status("[12/40] Compiling C++ object labs/03_tiling-tests-cpu.p/x.cpp.o");
  REQUIRE(s);
  CHECK(s->finished == 12);
  CHECK(s->total == 40);
  CHECK(s->description == "Compiling C++ object labs/03_tiling-tests-cpu.p/x.cpp.o");
  const auto last = parse_ninja_status("[40/40] Linking target labs/03_tiling-tests-cpu\r");
  REQUIRE(last);
  CHECK(last->finished == 40);
  CHECK(last->description == "Linking target labs/03_tiling-tests-cpu");
}

TEST_CASE("Lines that are not ninja's status are not read as steps", "[progress][grader]") {
  for (const char* line :
       {"ninja: Entering directory `build'", "ninja: no work to do.", "", "[x/40] Compiling",
        "[12/40]Compiling", "[12 /40] Compiling", "[41/40] more than all", "[0/0] nothing",
        "labs/03_tiling/matmul_tiled.cu:12:5: error: [3/4]", "[12/] x", "[1234567890123/5] x"}) {
    CAPTURE(line);
    CHECK_FALSE(parse_ninja_status(line));
  }
}

TEST_CASE("The time left comes from the rate so far, once a few steps are done", "[progress][grader]") {
  // Too few steps to say: the first are Meson's and the quickest.
  CHECK(time_left_text(0, 40, 10).empty());
  CHECK(time_left_text(kProgressEstimateAfter - 1, 40, 10).empty());
  // 4 steps in 20 s: 5 s a step, 36 to go: 180 s.
  CHECK(time_left_text(4, 40, 20) == "about 3 min left");
  // 10 of 12 in 30 s: 6 s left, to the next 5 s.
  CHECK(time_left_text(10, 12, 30) == "about 10 s left");
  CHECK(time_left_text(3, 4, 30) == "about 10 s left");
  CHECK(time_left_text(30, 31, 3) == "about 5 s left");
  // 87 s is still seconds; from a minute and a half on, minutes.
  CHECK(time_left_text(3, 32, 9) == "about 90 s left");
  CHECK(time_left_text(3, 33, 9) == "about 2 min left");
  // Nothing left to estimate.
  CHECK(time_left_text(40, 40, 100).empty());
}

TEST_CASE("A log gets a line at least every interval, and not one per step", "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(false));
  // Nothing in the first second: a build with nothing to do says nothing.
  p.update(0, 40);
  w.t = 0.5;
  p.tick();
  CHECK(w.out.empty());
  std::vector<double> line_times;
  // One step a second for 40 s, ticking every quarter second between.
  for (int step = 1; step <= 40; ++step)
    for (int q = 0; q < 4; ++q) {
      w.t = step - 1 + q * 0.25 + 0.25;
      const std::size_t before = w.out.size();
      if (q == 0)
        p.update(static_cast<std::size_t>(step), 40, "step " + std::to_string(step));
      else
        p.tick();
      if (w.out.size() > before) line_times.push_back(w.t);
    }
  REQUIRE(line_times.size() >= 2);
  CHECK(line_times.front() <= kProgressDelay_s + 0.25);
  for (std::size_t i = 1; i < line_times.size(); ++i) {
    CAPTURE(i, line_times[i - 1], line_times[i]);
    CHECK(line_times[i] - line_times[i - 1] <= kProgressLineInterval_s + 0.25);
    CHECK(line_times[i] - line_times[i - 1] >= kProgressLineInterval_s);
  }
  CHECK(kProgressLineInterval_s + 0.25 < 10);
  // Each line says what, how far, how long so far and what is left.
  const std::string& second = w.out[1];
  CHECK(second.find("building 03_tiling-tests-cpu: ") == 0);
  CHECK(second.find("/40 steps") != std::string::npos);
  CHECK(second.find(" s left") != std::string::npos);
  CHECK(second.back() == '\n');
  CHECK(second.find('\r') == std::string::npos);
  p.finish(true);
  CHECK(w.out.back() == "building 03_tiling-tests-cpu: done, 40 steps in 40 s\n");
}

TEST_CASE("A step that nothing moves still gets its lines: one long compile", "[progress][grader]") {
  Watched w;
  Progress p("building the references", "steps", w.options(false));
  p.update(1, 3);
  std::size_t lines = 0;
  for (w.t = 0; w.t < 60; w.t += 0.25) p.tick();
  lines = w.out.size();
  // At 1 s, then every 9 s: 1, 10, 19, 28, 37, 46, 55.
  CHECK(lines == 7);
  CHECK(w.out.back().find("1/3 steps, 55 s") != std::string::npos);
}

TEST_CASE("A step that ends within the delay prints nothing, its end neither", "[progress][grader]") {
  Watched w;
  {
    Progress p("building the cudalab program", "steps", w.options(false));
    w.t = 0.5;
    p.update(1, 1);
    p.tick();
  }
  CHECK(w.out.empty());
}

TEST_CASE("A failed step says so, and how far it got", "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(false));
  w.t = 3;
  p.update(5, 12);
  p.finish(false);
  CHECK(w.out.back() == "building 03_tiling-tests-cpu: failed after 3 s (5/12 steps)\n");
  // Nothing after the end, whatever comes.
  const std::size_t lines = w.out.size();
  w.t = 30;
  p.update(6, 12);
  p.tick();
  CHECK(w.out.size() == lines);
}

TEST_CASE("On a terminal one line is redrawn in place, with a bar that fits the width",
          "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(true));
  w.t = 2;
  p.update(10, 40, "Compiling C++ object labs/03_tiling-checks-cpu.p/a_very_long_path_that_goes_on.cpp.o");
  REQUIRE(w.out.size() == 1);
  const std::string& line = w.out[0];
  CHECK(line.front() == '\r');
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("[#####...............]") != std::string::npos);
  CHECK(line.find("10/40 steps") != std::string::npos);
  // What is seen between the \r and the erase-to-end: under the width, with
  // no room for a detail worth reading.
  const std::string seen = line.substr(1, line.find("\033[K") - 1);
  CHECK(seen.size() <= 99);
  CHECK(seen.find("(Compiling") == std::string::npos);
  CHECK(line.substr(line.size() - 3) == "\033[K");
  // Redrawn as time passes, not only when a step ends.
  w.t = 3;
  p.tick();
  CHECK(w.out.size() == 2);
  CHECK(w.out[1].find(" 3 s") != std::string::npos);
  // The end replaces the bar with a line of its own.
  w.t = 4;
  p.update(40, 40);
  p.finish(true);
  CHECK(w.out.back() == "\r\033[Kbuilding 03_tiling-tests-cpu: done, 40 steps in 4 s\n");
}

TEST_CASE("On a wide terminal the last step's name fills the room the numbers leave", "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(true, 130));
  w.t = 2;
  p.update(10, 40,
           "Compiling C++ object labs/03_tiling-checks-cpu.p/a_very_long_path_that_goes_on_and_on.cpp.o");
  REQUIRE(w.out.size() == 1);
  const std::string seen = w.out[0].substr(1, w.out[0].find("\033[K") - 1);
  CHECK(seen.size() == 129);
  CHECK(seen.find("10/40 steps, 2 s, about 10 s left (Compiling C++ object labs/") != std::string::npos);
}

TEST_CASE("On a narrow terminal the numbers stay and the line does not wrap", "[progress][grader]") {
  for (std::size_t width : {40, 60, 80}) {
    Watched w;
    Progress p("building 03_tiling-tests-cpu", "steps", w.options(true, width));
    w.t = 2;
    p.update(10, 40, "Compiling C++ object labs/03_tiling-checks-cpu.p/test_tiling.cpp.o");
    REQUIRE(w.out.size() == 1);
    const std::string seen = w.out[0].substr(1, w.out[0].find("\033[K") - 1);
    CAPTURE(width, seen);
    CHECK(seen.size() <= width - 1);
    CHECK(seen.find("10/40 steps, 2 s, about 10 s left") != std::string::npos);
  }
}

TEST_CASE("ninja's output fed in pieces moves the count by its status lines only", "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(false));
  w.t = 2;
  p.feed("ninja: Entering directory `build'\n[1/4] Compiling C++ ob");
  CHECK(p.text().find("steps") == std::string::npos);
  p.feed("ject a.o\nwarning: [5/3] is not a step\n[2/4] Compiling C++ object b.o\n");
  CHECK(p.text().find("2/4 steps") != std::string::npos);
  CHECK(p.text().find("(Compiling C++ object b.o)") != std::string::npos);
}

TEST_CASE("ninja's second count, after it regenerated the build, is timed on its own", "[progress][grader]") {
  Watched w;
  Progress p("building 03_tiling-tests-cpu", "steps", w.options(false));
  // Meson's regeneration: 30 s for one step.
  w.t = 30;
  p.update(1, 1, "Regenerating build files.");
  // Then 4 steps in 8 s: 2 s a step, 36 left: 72 s, not 30 s a step.
  w.t = 38;
  p.update(4, 40);
  CHECK(p.text().find("about 75 s left") != std::string::npos);
  // The end counts both: ninja ran 41 steps.
  w.t = 110;
  p.update(40, 40);
  p.finish(true);
  CHECK(w.out.back() == "building 03_tiling-tests-cpu: done, 41 steps in 110 s\n");
}

TEST_CASE("CUDALAB_PROGRESS=0 silences progress", "[progress][grader]") {
  const char* before = std::getenv("CUDALAB_PROGRESS");
  const std::string saved = before ? before : "";
  setenv("CUDALAB_PROGRESS", "0", 1);
  CHECK_FALSE(ProgressOptions::for_stderr().show);
  setenv("CUDALAB_PROGRESS", "1", 1);
  CHECK(ProgressOptions::for_stderr().show);
  if (before)
    setenv("CUDALAB_PROGRESS", saved.c_str(), 1);
  else
    unsetenv("CUDALAB_PROGRESS");
  Watched w;
  ProgressOptions o = w.options(false);
  o.show = false;
  Progress p("building", "steps", o);
  w.t = 20;
  p.update(3, 4);
  p.tick();
  p.finish(false);
  CHECK(w.out.empty());
}

TEST_CASE("A command that counts no steps shows what it said last: Meson's configure", "[progress][grader]") {
  Watched w;
  Progress p("configuring build-grade/slot-0/build (Meson)", "steps", w.options(false));
  p.feed("The Meson build system\nVersion: 1.0.1\n  Program nvcc found: YES (/usr/local/cuda/bin/nvcc)\n");
  w.t = 2;
  p.tick();
  REQUIRE(w.out.size() == 1);
  CHECK(w.out[0] ==
        "configuring build-grade/slot-0/build (Meson): 2 s (Program nvcc found: YES "
        "(/usr/local/cuda/bin/nvcc))\n");
}

TEST_CASE("While a step within a step shows, the outer one keeps quiet, and speaks again after it",
          "[progress][grader]") {
  Watched w;
  Progress outer("running the reference solution on each check", "checks", w.options(false));
  w.t = 1;
  outer.tick();
  REQUIRE(w.out.size() == 1);
  {
    Progress inner("building the reference solutions' 03_tiling-tests-cpu", "steps", w.options(false));
    // Within the inner one's first second, the outer one still speaks.
    w.t = 10.5;
    outer.tick();
    REQUIRE(w.out.size() == 2);
    w.t = 12;
    inner.update(3, 27);
    REQUIRE(w.out.size() == 3);
    for (; w.t < 40; w.t += 0.25) {
      outer.tick();
      inner.tick();
    }
    for (const auto& line : std::vector<std::string>(w.out.begin() + 2, w.out.end()))
      CHECK(line.find("building the reference solutions'") == 0);
  }
  CHECK(w.out.back().find("building the reference solutions' 03_tiling-tests-cpu: done") == 0);
  const std::size_t lines = w.out.size();
  outer.tick();
  REQUIRE(w.out.size() == lines + 1);
  CHECK(w.out.back().find("running the reference solution on each check: ") == 0);
}
