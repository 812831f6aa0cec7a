#!/usr/bin/env python3
"""tools/progress.py, which shows the ./cudalab script's first configure and
build: ninja's status lines read as a count, the time left in the words
grader/run/progress.h uses (test_progress.cpp checks the same cases there), a
log's line at least every 9 s under a clock the test moves, the terminal's
one line, and a command's output kept in its log and its exit code passed
on. Host-only, a second.

  test_progress_script.py SOURCE_ROOT
"""
import importlib.util
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

SRC = sys.argv.pop(1)
spec = importlib.util.spec_from_file_location("progress", os.path.join(SRC, "tools", "progress.py"))
progress = importlib.util.module_from_spec(spec)
spec.loader.exec_module(progress)


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def watched(terminal=False, width=100):
    clock, out = Clock(), []
    p = progress.Progress("building the cudalab program", "steps", terminal, width, out.append, clock)
    return p, clock, out


class Reading(unittest.TestCase):
    def test_status_lines_give_finished_and_total(self):
        self.assertEqual(progress.parse_ninja_status("[12/40] Compiling C++ object grader/x.cpp.o\n"),
                         (12, 40, "Compiling C++ object grader/x.cpp.o"))

    def test_other_lines_are_not_steps(self):
        for line in ["ninja: Entering directory `build'", "", "[x/40] a", "[12/40]a", "[41/40] a", "[0/0] a",
                     "x.cu:1: error: [3/4]", "[1234567890123/5] a"]:
            with self.subTest(line=line):
                self.assertIsNone(progress.parse_ninja_status(line))

    def test_time_left_as_the_program_words_it(self):
        self.assertEqual(progress.time_left_text(2, 40, 10), "")
        self.assertEqual(progress.time_left_text(4, 40, 20), "about 3 min left")
        self.assertEqual(progress.time_left_text(10, 12, 30), "about 10 s left")
        self.assertEqual(progress.time_left_text(3, 32, 9), "about 90 s left")
        self.assertEqual(progress.time_left_text(3, 33, 9), "about 2 min left")
        self.assertEqual(progress.time_left_text(40, 40, 100), "")


class Cadence(unittest.TestCase):
    def test_a_log_gets_a_line_at_least_every_9_s_and_not_one_per_step(self):
        p, clock, out = watched()
        times = []
        for q in range(1, 4 * 64 + 1):  # 64 steps, one a second, ticking every quarter second
            clock.t = q * 0.25
            before = len(out)
            if q % 4 == 0:
                p.update(q // 4, 64, "step %d" % (q // 4))
            else:
                p.tick()
            if len(out) > before:
                times.append(clock.t)
        self.assertLessEqual(times[0], progress.DELAY_S + 0.25)
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertTrue(all(progress.LINE_INTERVAL_S <= g <= progress.LINE_INTERVAL_S + 0.25 for g in gaps), gaps)
        self.assertLess(progress.LINE_INTERVAL_S + 0.25, 10)
        self.assertTrue(out[1].startswith("building the cudalab program: "), out[1])
        self.assertIn("/64 steps", out[1])
        self.assertIn(" s left", out[1])
        p.finish(True)
        self.assertEqual(out[-1], "building the cudalab program: done, 64 steps in 64 s\n")

    def test_the_end_counts_every_count_ninja_made(self):
        p, clock, out = watched()
        clock.t = 30
        p.update(1, 1, "Regenerating build files.")
        clock.t = 38
        p.update(4, 40)
        self.assertIn("about 75 s left", p.text(clock.t))
        clock.t = 110
        p.update(40, 40)
        p.finish(True)
        self.assertEqual(out[-1], "building the cudalab program: done, 41 steps in 110 s\n")

    def test_quick_steps_say_nothing(self):
        p, clock, out = watched()
        clock.t = 0.5
        p.update(1, 1)
        p.finish(True)
        self.assertEqual(out, [])

    def test_configure_shows_what_meson_said_last(self):
        p, clock, out = watched()
        p.note("Program nvcc found: YES")
        clock.t = 2
        p.tick()
        self.assertEqual(out, ["building the cudalab program: 2 s (Program nvcc found: YES)\n"])

    def test_a_terminal_gets_one_line_redrawn_that_fits(self):
        for width in (40, 80, 100):
            p, clock, out = watched(terminal=True, width=width)
            clock.t = 2
            p.update(10, 40, "Compiling C++ object grader/libcudalab-grader.a.p/a_long_name.cpp.o")
            self.assertEqual(len(out), 1)
            self.assertTrue(out[0].startswith("\r") and out[0].endswith("\033[K"))
            seen = out[0][1:-3]
            self.assertLessEqual(len(seen), width - 1)
            self.assertIn("10/40 steps, 2 s, about 10 s left", seen)
            if width == 100:
                self.assertIn("[#####...............]", seen)
            p.finish(True)
            self.assertEqual(out[-1], "\r\033[Kbuilding the cudalab program: done, 40 steps in 2 s\n")


class Running(unittest.TestCase):
    def test_output_goes_to_the_log_and_the_exit_code_is_passed_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "build.log")
            err = io.StringIO()
            env = os.environ.pop("CUDALAB_PROGRESS", None)
            try:
                with redirect_stderr(err):
                    rc = progress.run("building", log, [
                        "sh", "-c", 'echo "$NINJA_STATUS"; echo "[1/2] a"; sleep 1.2; echo "[2/2] b"; exit 3'])
            finally:
                if env is not None:
                    os.environ["CUDALAB_PROGRESS"] = env
            self.assertEqual(rc, 3)
            with open(log) as f:
                self.assertEqual(f.read(), "[%f/%t] \n[1/2] a\n[2/2] b\n")
            # Past the first second: a line, and the failure at the end.
            self.assertIn("building: 1/2 steps", err.getvalue())
            self.assertIn("building: failed after 1 s (2/2 steps)", err.getvalue())

    def test_a_command_that_cannot_start_is_127(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "build.log")
            self.assertEqual(progress.run("building", log, ["/nonexistent/ninja"]), 127)
            with open(log) as f:
                self.assertIn("cannot run /nonexistent/ninja", f.read())


if __name__ == "__main__":
    unittest.main()
