#!/usr/bin/env python3
"""The student's loop, timed: the first `./cudalab test LAB` on a fresh tree, then
edit-and-test with the solution in place, the whole lab and one check.

A benchmark, not a test: it asserts nothing and takes minutes (the first run
builds everything). Run it before and after a change that could slow what a
student waits for, on the machine students have (two cores, no GPU):

    tools/bench_student_loop.py                     # a fresh clone of this repository
    tools/bench_student_loop.py --tree RELEASE      # a student release (solution from here)
    meson test -C build --benchmark student-loop    # the same, registered with Meson

An edit appends a new line of code (`static const int edit_N = N;`) to the
student's file: a comment would be a compiler-cache hit, and no student edits
only comments. The compiler cache is off throughout (CCACHE_DISABLE=1), as on a
student's laptop without one. Prints each step's wall time and the first
run's build stages as `./cudalab` reported them; --json FILE writes them too.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def timed(argv, cwd, env):
    start = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return time.monotonic() - start, p.returncode, p.stdout


def stages(output):
    """`./cudalab`'s progress lines that say how long a stage took ("...: done in 18 s", "...: done, 35 steps in 74 s")."""
    out = []
    for line in output.replace("\r", "\n").splitlines():
        m = re.match(r"^(.*?): done(?:, (\d+) steps)? in (\d+) s", line.strip())
        if m:
            out.append({"stage": m.group(1), "steps": int(m.group(2) or 0), "seconds": int(m.group(3))})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", help="the tree to time (default: a fresh clone of this repository)")
    ap.add_argument("--lab", default="03_tiling")
    ap.add_argument("--check", default="ragged", help="the one check timed alone (--check)")
    ap.add_argument("--edits", type=int, default=10, help="edit-and-test runs of each kind")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()

    env = dict(os.environ, CCACHE_DISABLE="1")
    env.pop("CUDALAB_BUILD_DIR", None)
    scratch = None
    tree = a.tree
    if not tree:
        scratch = tempfile.mkdtemp(prefix="cudalab-student-loop-")
        tree = os.path.join(scratch, "tree")
        subprocess.run(["git", "clone", "-q", ROOT, tree], check=True)
    tree = os.path.realpath(tree)
    if a.tree and os.path.exists(os.path.join(tree, "build")):
        print(f"note: {tree}/build exists: the first run is not a fresh one", file=sys.stderr)
    student = os.path.join(tree, "labs", a.lab)
    solution = os.path.join(ROOT, "solutions", a.lab)
    results = {"tree": tree, "lab": a.lab, "cores": os.cpu_count()}
    saved = {f: open(os.path.join(student, f), "rb").read() for f in os.listdir(student)
             if os.path.isfile(os.path.join(student, f))}
    try:
        wall, rc, out = timed(["./cudalab", "test", a.lab], tree, env)
        results["first_run"] = {"seconds": round(wall, 1), "exit": rc, "stages": stages(out)}
        print(f"first ./cudalab test {a.lab}: {wall:.1f} s (exit {rc})")
        for s in results["first_run"]["stages"]:
            print(f"  {s['stage']}: {s['seconds']} s" + (f", {s['steps']} steps" if s["steps"] else ""))
        if rc not in (0, 1):
            print(out[-3000:])
            return 1
        # The solution in place: the loop a student who is nearly done runs.
        files = [f for f in os.listdir(solution) if os.path.isfile(os.path.join(solution, f))]
        for f in files:
            if os.path.exists(os.path.join(student, f)):
                shutil.copy(os.path.join(solution, f), os.path.join(student, f))
        target = os.path.join(student, sorted(f for f in files if f.endswith(".cu"))[0])
        timed(["./cudalab", "test", a.lab], tree, env)
        edit = 0
        for kind, argv in (("lab", ["./cudalab", "test", a.lab]),
                           ("one check", ["./cudalab", "test", a.lab, "--check", a.check])):
            times = []
            for _ in range(a.edits):
                edit += 1
                with open(target, "a") as f:
                    f.write(f"static const int edit_{edit} = {edit};\n")
                wall, rc, out = timed(argv, tree, env)
                if rc != 0:
                    print(f"{' '.join(argv)} failed (exit {rc}) with the solution in place:\n{out[-3000:]}")
                    return 1
                times.append(wall)
            key = "edit_and_test" if kind == "lab" else "edit_and_test_one_check"
            results[key] = {"runs": len(times), "median": round(statistics.median(times), 2),
                            "worst": round(max(times), 2), "seconds": [round(t, 2) for t in times]}
            label = f"edit and ./cudalab test {a.lab}" + ("" if kind == "lab" else f" --check {a.check}")
            print(f"{label}: median {statistics.median(times):.2f} s, worst {max(times):.2f} s "
                  f"({len(times)} runs)")
    finally:
        for f, data in saved.items():  # the tree's own files back, only those changed (a
            path = os.path.join(student, f)  # rewritten lab.toml would reconfigure the build)
            if open(path, "rb").read() != data:
                with open(path, "wb") as out:
                    out.write(data)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
