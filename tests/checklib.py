"""The test scripts' checks: each prints one line, "ok    WHAT" or "FAIL  WHAT",
as it runs (so a test's log reads as the list of what was checked), failures
are collected, and the script ends with finish(): a summary line and exit code
1 if any check failed. skip() is Meson's "skipped" (exit 77).

A script in a folder of tests/ imports it by its own location, with nothing
installed:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from checklib import check, finish  # noqa: E402
"""
import csv
import sys

failures = []  # what failed, in order: a script that keeps logs on failure reads it
passes = 0


def check(cond, what):
    """Records one check; returns whether it held, for a script that goes on only if so."""
    global passes
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if cond:
        passes += 1
    else:
        failures.append(what)
    return bool(cond)


def near(value, expected, tolerance=0.011):
    """A number as a CSV cell holds it (a string, maybe empty) within tolerance of expected."""
    try:
        return abs(float(value) - expected) < tolerance
    except (TypeError, ValueError):
        return False


def rows_of(path):
    """A CSV file's rows as dicts by its header; none (and why, printed) if it cannot be read."""
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        print(f"cannot read {path}: {e}")
        return []


def skip(why):
    print(f"skipped: {why}", flush=True)
    sys.exit(77)


def finish():
    """The summary line, then exit: 1 if any check failed, else 0."""
    print(f"{passes} passed, {len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)
