#!/usr/bin/env python3
"""`cudalab grade` without a usable GPU: by default it grades the
correctness checks in CPU mode, says so on its first line, reports the speed
checks as not run, marks the grade provisional in every export and exits 3;
`--no-cpu` gives the old behaviour (built only, every check "not run", exit 3);
`--prepare` builds the grading folder alone (and refuses `--gpus` without a GPU).
The GPU is hidden (CUDA_VISIBLE_DEVICES=""), so this runs the same on a GPU
host. The course has every lab (so that its grading folder is configured as
the CPU-mode gallery's, which Meson lets it share: then little is left to
build), the submission only lab 01's solution: the other labs are missing and
cost nothing.

  test_cpu_fallback.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
LAB = "01_coalescing"
# Every lab of the tree (a folder of labs/ with a lab.toml), as the grader finds them.
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))


def grade(*args):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([CUDALAB, "grade", "--work-dir", WORK, *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


with open(os.path.join(SRC, "labs", LAB, "lab.toml"), "rb") as f:
    manifest = tomllib.load(f)
kinds = {c["name"]: c.get("kind", "correctness") for c in manifest["check"]}

tmp = tempfile.mkdtemp(prefix="cudalab-cpu-fallback-")
try:
    sub = os.path.join(tmp, "alice")
    os.makedirs(sub)
    for f in manifest["lab"]["student_files"]:
        shutil.copy(os.path.join(SRC, "solutions", LAB, f), sub)
    course = os.path.join(tmp, "course.toml")
    with open(course, "w") as f:
        f.write(f'[course]\ntitle = "one lab submitted"\nlabs = {json.dumps(LABS)}\n[grading]\nseed = 424242\n')

    # --- the default: CPU mode, a provisional grade --------------------------
    out = os.path.join(tmp, "cpu")
    rc, stdout, stderr = grade(sub, "--course", course, "--out", out)
    print(stdout + stderr)
    first = stdout.split("\n")[0]
    check(rc == 3, f"without a GPU, cudalab grade exits 3 (a provisional grade), got {rc}")
    check(first.startswith("No usable GPU (") and "correctness checks graded in CPU mode" in first
          and "speed checks not run" in first and "provisional" in first,
          f"its first line says it grades in CPU mode, provisionally: {first}")
    res = json.load(open(os.path.join(out, "results.json")))
    tests = {t["name"].split(": ", 1)[1]: t for t in res["tests"] if t["name"].startswith(LAB + ":")}
    check(set(tests) == set(kinds), "results.json lists every check of the lab")
    correct = [n for n, k in kinds.items() if k == "correctness"]
    speed = [n for n, k in kinds.items() if k == "speed"]
    check(correct and all(tests[n]["status"] == "passed" and tests[n]["score"] == tests[n]["max_score"]
                          for n in correct), "the solution passes every correctness check in CPU mode")
    check(speed and all(tests[n]["output"].startswith("not_run") and tests[n]["score"] == 0 for n in speed),
          "the speed checks are reported not run")
    check(res.get("extra_data", {}).get("cudalab", {}).get("mode") == "cpu"
          and res["extra_data"]["cudalab"].get("provisional") is True,
          "results.json's extra_data says CPU mode, provisional")
    check("(CPU mode" in res["output"].split("\n")[0] and "provisional" in res["output"].split("\n")[0],
          "results.json's output says CPU mode and provisional on its first line")
    report = open(os.path.join(out, "report.txt")).read().split("\n")[0]
    check("(CPU mode" in report and "provisional" in report, f"report.txt's first line too: {report}")
    check("provisional" in stdout.rstrip().split("\n")[-2] or "provisional" in stdout.rstrip().split("\n")[-1],
          "the printed grade ends by saying it is provisional")

    # --- --no-cpu: built only, checks not run ---------------------------------
    out2 = os.path.join(tmp, "no-cpu")
    rc2, stdout2, stderr2 = grade(sub, "--course", course, "--out", out2, "--no-cpu")
    print(stdout2 + stderr2)
    check(rc2 == 3, f"--no-cpu without a GPU exits 3, got {rc2}")
    check("No usable GPU (" not in stdout2 and "CPU mode" not in stdout2, "--no-cpu prints no CPU-mode banner")
    res2 = json.load(open(os.path.join(out2, "results.json")))
    check(all(t["output"].startswith("not_run") and t["score"] == 0 for t in res2["tests"]
              if t["name"].startswith(LAB + ":")),
          "--no-cpu reports every check not run, 0 points")
    check(res2.get("extra_data", {}).get("cudalab", {}).get("mode") == "none", "and extra_data says mode none")
    check("NOT RUN" in stdout2, "the printed grade says NOT RUN")

    # --- --prepare: the grading folder alone; --gpus needs a GPU there --------
    rc3, stdout3, stderr3 = grade("--prepare", "--course", course)
    print(stdout3 + stderr3)
    check(rc3 == 0 and stdout3.rstrip().endswith("ready"), f"--prepare exits 0 and says ready, got {rc3}")
    check("second looks" not in stdout3, "without a GPU it builds no second looks' builds (no look runs there)")
    check(os.path.isfile(os.path.join(WORK, "build", "labs", LAB + "-tests")), "it built the lab's tests")
    rc4, stdout4, stderr4 = grade("--prepare", "--gpus", "2", "--course", course)
    print(stdout4 + stderr4)
    check(rc4 == 2 and "--gpus: no GPU is usable here" in stderr4,
          f"--prepare --gpus 2 without a GPU exits 2 and says there is none, got {rc4}: {stderr4.strip()}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
