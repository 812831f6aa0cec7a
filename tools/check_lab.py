#!/usr/bin/env python3
"""Checks one lab the way the framework's tests and the release will, and
builds that lab alone: `./cudalab check-lab NN_name` (docs/new-lab.md).

  check_lab.py --source ROOT [--build DIR] [--no-build] LAB

Steps, each timed, in the order a lab author meets their failures:
  1. manifest     the lab's files and checks agree (tests/new_lab/test_labs_consistent.py),
                  and the tables made from the manifests are current (tools/cause_tables.py)
  2. handouts     the handouts name only what a student has (tests/handouts/test_handouts.py)
  3. release      the lab's skeleton is not its solution, and no line of its
                  solution is in a file the student release ships
                  (tools/release.py's leak scan, on the files it would copy)
  4. build        the lab's CPU-mode test binary and its variants, and the
                  cudalab program that runs them (ninja, those targets only)
  5. variants     each variant against its expect.toml (`meson test --suite LAB`,
                  nothing rebuilt)
--no-build stops after step 3 (seconds, nothing built). Exit code 1 when a
step failed; every step runs, so one run lists every problem.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def say(text):
    print(text, flush=True)


def run_script(argv, lab):
    """Runs a framework test over the whole tree; (ok, the lines that concern this lab or failed)."""
    r = subprocess.run([sys.executable] + argv, capture_output=True, text=True)
    lines = (r.stdout + r.stderr).splitlines()
    shown = [l for l in lines if (lab in l and not l.startswith("ok")) or "FAIL" in l]
    return r.returncode == 0, shown or ([lines[-1]] if lines and r.returncode else [])


def release_problems(src, lab):
    """The release's two refusals, for this lab: its skeleton equal to its solution, and any line of
    its solution in a file the release ships."""
    import release
    problems = []
    for skeleton, solution, _ in release.skeletons_that_are_solutions(src, [lab]):
        problems.append(f"{skeleton} is its solution {solution}: the release would hand every student "
                        "the solution (write the skeleton's TODOs)")
    with tempfile.TemporaryDirectory(prefix="cudalab-check-lab-") as out:
        release.copy_tree(src, out)
        _, _, found = release.leak_scan(src, out)
    for path, leak_lab, f, line in sorted(set(found)):  # a line the solution has twice: said once
        if leak_lab == lab:
            problems.append(f"{path} holds a line of solutions/{lab}/{f}: \"{line}\" (reword it there, or, "
                            "if the course gives it away on purpose, add it to ALLOWED in tools/release.py "
                            "with the reason)")
    return problems


def lab_targets(build, lab):
    """The ninja targets of this lab's CPU-mode checks and variants, and of the program that runs them."""
    r = subprocess.run(["ninja", "-C", build, "-t", "targets", "all"], capture_output=True, text=True)
    names = {line.split(":")[0] for line in r.stdout.splitlines()}
    pattern = re.compile(rf"^(labs/{re.escape(lab)}-tests-cpu|tests/{re.escape(lab)}-variant-[a-z0-9_]+"
                         rf"(-cpu|-access)?|tests/{re.escape(lab)}-solution-access)$")
    mine = sorted(n for n in names if pattern.match(n))
    return mine + [n for n in ("grader/cudalab", "grader/cudalab-sandbox") if n in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="the instructor's tree (with solutions/)")
    ap.add_argument("--build", help="the build folder (default SOURCE/build)")
    ap.add_argument("--no-build", action="store_true", help="steps 1 to 3 only: nothing built")
    ap.add_argument("lab", help="NN_name, a folder of labs/")
    a = ap.parse_args()
    src = os.path.realpath(a.source)
    lab = a.lab.rstrip("/").split("/")[-1]
    if not os.path.isfile(os.path.join(src, "labs", lab, "lab.toml")):
        say(f"cudalab check-lab: labs/{lab}/lab.toml does not exist (the labs: "
            f"{', '.join(sorted(d for d in os.listdir(os.path.join(src, 'labs')) if d[:2].isdigit()))})")
        return 2
    if not os.path.isdir(os.path.join(src, "solutions", lab)):
        say(f"cudalab check-lab: solutions/{lab}/ does not exist: check-lab runs in the instructor's tree")
        return 2
    build = os.path.realpath(a.build or os.path.join(src, "build"))
    results = []

    def step(name, fn):
        t0 = time.monotonic()
        ok, lines = fn()
        seconds = time.monotonic() - t0
        results.append((name, ok, seconds))
        say(f"{'ok  ' if ok else 'FAIL'} {name} ({seconds:.1f} s)")
        for line in lines:
            say(f"     {line}")

    def manifest():
        ok1, lines1 = run_script([os.path.join(src, "tests", "new_lab", "test_labs_consistent.py"), src], lab)
        ok2, lines2 = run_script([os.path.join(HERE, "cause_tables.py"), src, "--check"], lab)
        return ok1 and ok2, lines1 + lines2

    def handouts():
        return run_script([os.path.join(src, "tests", "handouts", "test_handouts.py"), src], lab)

    def release_step():
        problems = release_problems(src, lab)
        return not problems, problems

    step("manifest: files, checks and the tables made from them", manifest)
    step("handouts: what they name a student has", handouts)
    step("release: no solution line in what students get", release_step)
    if not a.no_build:
        if not os.path.isfile(os.path.join(build, "build.ninja")):
            say(f"cudalab check-lab: {build} is not configured: run ./cudalab check-lab (it configures it)")
            return 2

        def build_step():
            targets = lab_targets(build, lab)
            if not any(t.startswith("tests/") for t in targets):
                return False, [f"no variant targets for {lab} in {build}: reconfigure it "
                               "(meson setup --reconfigure) after adding tests/variants/" + lab]
            r = subprocess.run(["ninja", "-C", build] + targets, capture_output=True, text=True)
            tail = [l for l in (r.stdout + r.stderr).splitlines() if "error" in l.lower()][:12]
            return r.returncode == 0, tail if r.returncode else [f"{len(targets)} targets"]

        def variants_step():
            r = subprocess.run(["meson", "test", "-C", build, "--no-rebuild", "--suite", lab, "--no-suite", "gpu",
                                "--print-errorlogs"], capture_output=True, text=True)
            lines = (r.stdout + r.stderr).splitlines()
            shown = [l.strip() for l in lines if re.search(r"\b(FAIL|TIMEOUT|ERROR)\b", l)]
            counts = [" ".join(l.split()) for l in lines if re.match(r"^(Ok|Fail|Timeout):", l)]
            return r.returncode == 0, shown[:20] + counts

        step(f"build: {lab}'s CPU-mode checks and variants", build_step)
        if results[-1][1]:
            step(f"variants: each against its expect.toml (CPU mode)", variants_step)
    failed = [name for name, ok, _ in results if not ok]
    total = sum(s for _, _, s in results)
    say(f"check-lab {lab}: {len(results) - len(failed)} of {len(results)} steps passed in {total:.1f} s" +
        (f"; failed: {', '.join(n.split(':')[0] for n in failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
