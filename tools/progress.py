#!/usr/bin/env python3
"""Runs a long command of the ./cudalab script (the first `meson setup`, the
first build of the cudalab program) with its output kept in a log and its
progress on stderr: what it does, how far it is (ninja's steps) and about how
long is left. On a terminal one line redrawn in place; elsewhere (CI logs,
autograders) a line at least every 9 s. Nothing within the first second, so a
build with nothing to do says nothing. CUDALAB_PROGRESS=0 silences it.

  progress.py WHAT LOG -- COMMAND...

Exits with COMMAND's exit code (127 where it cannot start); the script shows
LOG where it fails. The cudalab program's own steps use grader/run/progress.h,
whose lines read the same: keep the two alike.
"""
import math
import os
import re
import selectors
import shutil
import subprocess
import sys
import time

# grader/run/progress.h's constants.
LINE_INTERVAL_S = 9
DELAY_S = 1
ESTIMATE_AFTER = 3
NINJA_STATUS = "[%f/%t] "
REDRAW_S = 0.1
BAR_WIDTH = 20
NUMBERS_ROOM, DETAIL_ROOM = 38, 15

STATUS = re.compile(r"\[(\d{1,9})/(\d{1,9})\](?: (.*))?$")


def parse_ninja_status(line):
    """(finished, total, description) of ninja's status line, else None."""
    m = STATUS.match(line.rstrip("\r\n"))
    if not m:
        return None
    finished, total = int(m.group(1)), int(m.group(2))
    if total == 0 or finished > total:
        return None
    return finished, total, m.group(3) or ""


def time_left_text(done, total, elapsed_s):
    """'about 40 s left', 'about 3 min left'; '' until a few steps are done."""
    if done < ESTIMATE_AFTER or done >= total or elapsed_s <= 0:
        return ""
    left = elapsed_s / done * (total - done)
    if left < 90:
        return "about %d s left" % (5 * max(1, math.ceil(left / 5)))
    return "about %d min left" % round(left / 60)


class Progress:
    """One step's progress lines (grader/run/progress.h's Progress)."""

    def __init__(self, what, unit, terminal, width=80, write=None, clock=time.monotonic, show=True):
        self.what, self.unit, self.terminal, self.width = what, unit, terminal, width
        self.write = write or (lambda s: (sys.stderr.write(s), sys.stderr.flush()))
        self.clock, self.show = clock, show
        self.start = self.series_start = self.last_update = clock()
        self.last_line = 0.0
        self.done = self.total = 0
        self.done_before = 0  # in the counts before this one: the end says all
        self.detail = ""
        self.shown = self.finished = False

    def update(self, done, total, detail=""):
        if self.finished:
            return
        t = self.clock()
        # ninja's count after it regenerated the build files is timed on its own
        if total != self.total or done < self.done:
            self.series_start = self.start if (self.done == 0 and self.total == 0) else self.last_update
            self.done_before += self.done
        self.done, self.total = done, total
        if detail:
            self.detail = detail
        self.last_update = t
        self._show(t)

    def note(self, detail):
        """What the command said last, where it counts no steps (Meson's configure)."""
        self.detail = detail

    def tick(self):
        self._show(self.clock())

    def finish(self, ok):
        if self.finished:
            return
        self.finished = True
        if not (self.show and self.shown):
            return
        elapsed = self.clock() - self.start
        if not ok:
            line = "%s: failed after %.0f s" % (self.what, elapsed)
            if self.total:
                line += " (%d/%d %s)" % (self.done, self.total, self.unit)
        elif self.total:
            line = "%s: done, %d %s in %.0f s" % (self.what, self.done_before + self.total, self.unit, elapsed)
        else:
            line = "%s: done in %.0f s" % (self.what, elapsed)
        self.write(("\r\033[K" if self.terminal else "") + line + "\n")

    def text(self, now):
        parts = []
        if self.total:
            parts.append("%d/%d %s" % (self.done, self.total, self.unit))
        parts.append("%.0f s" % (now - self.start))
        left = time_left_text(self.done, self.total, now - self.series_start)
        if left:
            parts.append(left)
        numbers = ", ".join(parts)
        if not self.terminal:
            line = "%s: %s" % (self.what, numbers)
            return line + (" (%s)" % self.detail[:100] if self.detail else "")
        fits = max(1, self.width - 1)
        # the bar's width from the room the longest numbers leave, so it keeps its width
        width = next((w for w in (BAR_WIDTH, BAR_WIDTH // 2) if len(self.what) + w + 3 + NUMBERS_ROOM <= fits), 0)
        bar = ""
        if self.total and width:
            filled = min(width, width * self.done // self.total)
            bar = " [" + "#" * filled + "." * (width - filled) + "]"
        what = self.what
        if len(what) + len(bar) + 1 + len(numbers) > fits:
            what = what[:max(0, fits - len(numbers) - 4)] + "..."
        line = what + bar + " " + numbers
        if self.detail and len(line) + 3 + DETAIL_ROOM <= fits:
            line += " (" + self.detail[:fits - len(line) - 3] + ")"
        return line[:fits]

    def _show(self, now):
        if not self.show or self.finished or now - self.start < DELAY_S:
            return
        if self.shown and now - self.last_line < (REDRAW_S if self.terminal else LINE_INTERVAL_S):
            return
        text = self.text(now)
        self.write("\r" + text + "\033[K" if self.terminal else text + "\n")
        self.shown, self.last_line = True, now


def run(what, log_path, command):
    terminal = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    progress = Progress(what, "steps", terminal, shutil.get_terminal_size((80, 24)).columns,
                        show=os.environ.get("CUDALAB_PROGRESS") != "0")
    env = dict(os.environ, NINJA_STATUS=NINJA_STATUS)
    with open(log_path, "wb") as log:
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        except OSError as e:
            log.write(("cannot run %s: %s\n" % (command[0], e)).encode())
            return 127
        try:
            return pump(child, log, progress)
        except KeyboardInterrupt:  # the command had the Ctrl-C too
            child.wait()
            progress.finish(False)
            return 130


def pump(child, log, progress):
    """The command's output into the log and the progress, until it ends; its exit code."""
    sel = selectors.DefaultSelector()
    sel.register(child.stdout, selectors.EVENT_READ)
    pending = b""
    while True:
        if sel.select(timeout=0.25):
            data = os.read(child.stdout.fileno(), 65536)
            if not data:
                break
            log.write(data)
            pending += data
            *lines, pending = re.split(rb"[\r\n]", pending)
            pending = pending[-65536:]
            for raw in lines:
                line = raw.decode(errors="replace")
                step = parse_ninja_status(line)
                if step:
                    progress.update(*step)
                elif not progress.total and line.strip() and not line.startswith("ninja:"):
                    progress.note(line.strip())
        progress.tick()
    rc = child.wait()
    progress.finish(rc == 0)
    return rc


def main():
    args = sys.argv[1:]
    if len(args) < 4 or args[2] != "--":
        sys.exit(__doc__.split("\n\n")[1])
    return run(args[0], args[1], args[3:])


if __name__ == "__main__":
    sys.exit(main())
