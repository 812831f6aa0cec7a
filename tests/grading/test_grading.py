#!/usr/bin/env python3
"""End-to-end tests of `cudalab grade` and the Gradescope scripts, as an
instructor and an autograder container use them. Host-only: without a GPU the
checks are reported as not run (--no-cpu: tests/grading/test_cpu_fallback.py
covers the default, CPU mode), and everything else (overlay, build per lab,
compile errors, exports, batch resume, the scripts) is still exercised; with
a GPU the solutions must also get full marks.

  test_grading.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
# Every lab of the tree (a folder of labs/ with a lab.toml), as the grader finds them.
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))


def student_files(lab, base):
    import tomllib
    with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
        files = tomllib.load(f)["lab"]["student_files"]
    return [os.path.join(SRC, base, lab, f) for f in files]


def grade(*args):
    r = subprocess.run([CUDALAB, "grade", "--work-dir", WORK, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


tmp = tempfile.mkdtemp(prefix="cudalab-grading-")
try:
    # --- a batch of submissions in every shape the grader accepts ----------
    batch = os.path.join(tmp, "batch")
    os.makedirs(batch)
    sol = os.path.join(batch, "alice")  # flat folder, all solutions, plus a tampered test
    os.makedirs(sol)
    for lab in LABS:
        for f in student_files(lab, "solutions"):
            shutil.copy(f, sol)
    with open(os.path.join(sol, "test_tiling.cpp"), "w") as f:
        f.write('#include "cudalab/testing.h"\nTEST_CASE("everything passes") {}\n')
    with zipfile.ZipFile(os.path.join(batch, "bob.zip"), "w") as z:  # repo layout, skeletons
        for lab in LABS:
            for f in student_files(lab, "labs"):
                z.write(f, f"labs/{lab}/{os.path.basename(f)}")
    with tarfile.open(os.path.join(batch, "carol.tar.gz"), "w:gz") as t:  # nested; lab 03 broken
        for lab in LABS:
            for f in student_files(lab, "solutions"):
                if lab == "03_tiling":
                    broken = os.path.join(tmp, os.path.basename(f))
                    with open(f) as src, open(broken, "w") as dst:
                        dst.write(src.read().replace("float acc = 0.0f;", "float acc = 0.0f"))
                    f = broken
                t.add(f, f"carol-submission/{os.path.basename(f)}")
    os.makedirs(os.path.join(batch, "dave"))  # empty
    with open(os.path.join(batch, "erin.zip"), "wb") as f:  # not a zip at all
        f.write(b"this is not an archive")

    out = os.path.join(tmp, "out")
    rc, log = grade("--batch", batch, "--out", out, "--no-cpu")
    print(log)
    gpu = rc == 0
    check(rc in (0, 3), f"batch grading exits 0 (GPU) or 3 (no GPU), got {rc}")
    rows = {r["submission"]: r for r in csv.DictReader(open(os.path.join(out, "grades.csv")))}
    check(sorted(rows) == ["alice", "bob", "carol", "dave", "erin"], "the gradebook has a row per submission")
    for sub in rows:
        check(os.path.isfile(os.path.join(out, sub, "results.json")), f"{sub} has a results.json")
    check("03_tiling:build_failed" in rows["carol"]["status"], "a compile error marks that lab build_failed")
    check("01_coalescing:build_failed" not in rows["carol"]["status"], "a compile error does not touch other labs")
    check(all(f"{lab}:missing" in rows["dave"]["status"] for lab in LABS), "an empty submission misses every lab")
    check("unreadable" in rows["erin"]["status"], "a broken archive is reported as unreadable")
    check("min" in log and "total" in log, "the batch ends with a score distribution")

    res = json.load(open(os.path.join(out, "carol", "results.json")))
    check(set(res) >= {"score", "execution_time", "output", "tests"}, "Gradescope results have the top-level fields")
    t0 = res["tests"][0]
    check(set(t0) >= {"name", "score", "max_score", "status", "output", "visibility"},
          "Gradescope tests have name, score, max_score, status, output, visibility")
    carol03 = [t for t in res["tests"] if t["name"].startswith("03_tiling")]
    check(all(t["score"] == 0 for t in carol03), "the lab that did not compile scores 0")
    check(any("error" in t["output"] for t in carol03), "the compiler's message reaches the student")
    check("overlay" not in "".join(t["output"] for t in carol03), "compiler paths are shown as the student's, not the grader's")
    alice = json.load(open(os.path.join(out, "alice", "results.json")))
    check("test_tiling.cpp: tests always come from the course" in alice["output"], "a submitted test file is ignored and listed")
    pl = json.load(open(os.path.join(out, "alice", "prairielearn.json")))
    check(0.0 <= pl["score"] <= 1.0 and "tests" in pl, "PrairieLearn results have a 0..1 score and tests")
    junit = ET.parse(os.path.join(out, "alice", "junit.xml")).getroot()
    check(junit.tag == "testsuites" and len(junit.findall("testsuite")) == len(LABS), "JUnit has a suite per lab")
    if gpu:
        check(float(rows["alice"]["score"]) == float(rows["alice"]["max_score"]), "the solutions get full marks")
        check(float(rows["bob"]["score"]) == 0.0, "the skeletons get 0")

    # --- resume --------------------------------------------------------------
    rc2, log2 = grade("--batch", batch, "--out", out, "--no-cpu")
    check(log2.count("graded before, skipped") == 5, "a second batch run skips what was graded")
    check(open(os.path.join(out, "grades.csv")).read().count("\n") == 6, "and still writes the whole gradebook")
    rc3, log3 = grade("--batch", batch, "--out", out, "--force", "--no-cpu")
    check("graded before" not in log3, "--force grades everything again")

    # --- the Gradescope scripts outside a container ------------------------
    root = os.path.join(tmp, "autograder")
    shutil.copytree(sol, os.path.join(root, "submission"))
    env = dict(os.environ, AUTOGRADER_ROOT=root, CUDALAB_ROOT=SRC, CUDALAB_GRADE_WORK_DIR=WORK)
    r = subprocess.run([os.path.join(SRC, "grader", "autograder", "run_autograder")], env=env,
                       capture_output=True, text=True)
    check(r.returncode == 0, "run_autograder exits 0")
    res = json.load(open(os.path.join(root, "results", "results.json")))
    check("tests" in res and len(res["tests"]) > 0, "run_autograder writes results/results.json")

    # --- a malformed course file grades nothing ----------------------------
    bad = os.path.join(tmp, "course.toml")
    with open(bad, "w") as f:
        f.write('[course]\nlabs = ["03_tiling", "09_nope"]\n')
    rc4, log4 = grade(sol, "--course", bad, "--out", os.path.join(tmp, "bad"))
    check(rc4 == 2 and "course.toml:2" in log4 and "09_nope" in log4, "a malformed course file: exit 2, file and line named")
    check(not os.path.exists(os.path.join(tmp, "bad")), "and nothing is graded with it")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
