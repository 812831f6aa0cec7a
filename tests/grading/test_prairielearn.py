#!/usr/bin/env python3
"""PrairieLearn's entry point, grader/autograder/run_prairielearn,
run against a temporary /grade folder (PL_GRADE_ROOT) without a GPU (hidden
with CUDA_VISIBLE_DEVICES="", so this runs the same on a GPU host):

  - lab 01's solution, with the question's tests/course.toml allowing CPU mode:
    a gradable results.json in PrairieLearn's format (score in 0..1 equal to
    the tests' points over their max_points; each test with name, points,
    max_points, message, output), lab 01's correctness checks at full marks;
  - the same course without cpu_mode: no GPU, so "gradable": false and a
    message that says why (the attempt does not count);
  - nothing submitted, only files no lab grades, and a malformed course file
    (the grader itself fails): "gradable": false with a message for each;
  - the example question (grader/autograder/prairielearn/questions/lab03_tiling)
    as PrairieLearn runs it, its tests/ folder at /grade/tests: lab 03's
    solution, under the name its question.html submits, graded in CPU mode
    (its course file's cpu_mode); the same file with a syntax error:
    "gradable": false, the compiler's error in the message and format_errors,
    the build log in the output.

The course lists every lab with the grading seed of test_cpu_fallback.py, so
it grades in the CPU-mode gallery's folder after it: little is left to build.

  test_prairielearn.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR
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

# Absolute: the steps run in folders of their own.
SRC, CUDALAB, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
LAB = "01_coalescing"
# Every lab of the tree (a folder of labs/ with a lab.toml), as the grader finds them.
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
ENTRY = os.path.join(SRC, "grader", "autograder", "run_prairielearn")


def run_job(root, student_files=(), course=None, course_env=None, tests_dir=None):
    """A fresh /grade folder: student/ with these files, tests/course.toml
    with this text (or tests/ a copy of tests_dir, as PrairieLearn copies a
    question's); runs the entry point and returns (exit code, output,
    results.json or None)."""
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "student"))
    for name, text in student_files:
        with open(os.path.join(root, "student", name), "w") as f:
            f.write(text)
    if tests_dir is not None:
        shutil.copytree(tests_dir, os.path.join(root, "tests"))
    elif course is not None:
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "tests", "course.toml"), "w") as f:
            f.write(course)
    env = dict(os.environ, PL_GRADE_ROOT=root, CUDALAB_ROOT=SRC, CUDALAB_BIN=CUDALAB,
               CUDALAB_GRADE_WORK_DIR=WORK, CUDA_VISIBLE_DEVICES="")
    env.pop("CUDALAB_COURSE", None)
    if course_env:
        env["CUDALAB_COURSE"] = course_env
    r = subprocess.run([ENTRY], env=env, capture_output=True, text=True)
    print(r.stdout[-3000:] + r.stderr[-3000:], flush=True)
    path = os.path.join(root, "results", "results.json")
    try:
        with open(path) as f:
            return r.returncode, r.stdout + r.stderr, json.load(f)
    except (OSError, ValueError) as e:
        print(f"no valid {path}: {e}")
        return r.returncode, r.stdout + r.stderr, None


def not_gradable(res, words, what):
    check(res is not None and res.get("gradable") is False, f"{what}: \"gradable\": false")
    msg = (res or {}).get("message", "")
    check(all(w in msg for w in words), f"{what}: the message says why ({', '.join(words)}): {msg!r}")
    check(isinstance((res or {}).get("tests"), list), f"{what}: results.json still has a tests list")


with open(os.path.join(SRC, "labs", LAB, "lab.toml"), "rb") as f:
    manifest = tomllib.load(f)
kinds = {c["name"]: c.get("kind", "correctness") for c in manifest["check"]}
solution = []
for name in manifest["lab"]["student_files"]:
    with open(os.path.join(SRC, "solutions", LAB, name)) as f:
        solution.append((name, f.read()))
course = f'[course]\ntitle = "PrairieLearn"\nlabs = {json.dumps(LABS)}\n[grading]\nseed = 424242\n'

tmp = tempfile.mkdtemp(prefix="cudalab-prairielearn-")
root = os.path.join(tmp, "grade")
try:
    # --- graded: CPU mode allowed by the question's tests/course.toml -------
    rc, log, res = run_job(root, solution, course=course + "cpu_mode = true\n")
    check(rc == 0, f"run_prairielearn exits 0, got {rc}")
    check(res is not None, "it writes results/results.json, valid JSON")
    res = res or {}
    check(res.get("gradable") is True, "a graded submission is gradable")
    tests = res.get("tests", [])
    check(len(tests) > 0 and all({"name", "points", "max_points", "message", "output"} <= set(t) for t in tests),
          "every test has name, points, max_points, message and output")
    score, points, maxp = res.get("score"), sum(t["points"] for t in tests), sum(t["max_points"] for t in tests)
    check(isinstance(score, (int, float)) and 0.0 <= score <= 1.0, f"score is a number in 0..1: {score}")
    check(maxp > 0 and abs(score - points / maxp) < 1e-3,
          f"score is the tests' points over their max_points ({points} / {maxp} = {points / maxp if maxp else 0})")
    mine = {t["name"].split(": ", 1)[1]: t for t in tests if t["name"].startswith(LAB + ": ")}
    correct = [n for n, k in kinds.items() if k == "correctness"]
    check(correct and all(n in mine and mine[n]["points"] == mine[n]["max_points"] > 0 for n in correct),
          "the solution gets every correctness check's points in CPU mode")
    check(0.0 < score < 1.0, "and less than full marks: the speed checks and the other labs count")
    check("CPU mode" in res.get("message", "") and "CPU mode" in res.get("output", ""),
          f"message and output say CPU mode: {res.get('message')!r}")
    check(len(json.dumps(res).encode()) < 1_000_000, "results.json is under PrairieLearn's 1 MB")

    # --- no GPU, and the course does not grade in CPU mode --------------------
    rc, log, res = run_job(root, solution, course=course)
    check(rc == 0, f"without a GPU (course without cpu_mode) run_prairielearn still exits 0, got {rc}")
    not_gradable(res, ["No usable GPU", "does not count"], "no GPU, CPU mode not allowed")

    # --- nothing submitted ------------------------------------------------------
    rc, log, res = run_job(root, [], course=course + "cpu_mode = true\n")
    check(rc == 0, f"an empty student folder: exit 0, got {rc}")
    not_gradable(res, ["No files were submitted"], "an empty student folder")

    # --- only files no lab grades ----------------------------------------------
    rc, log, res = run_job(root, [("notes.txt", "my notes\n")], course=course + "cpu_mode = true\n")
    check(rc == 0, f"a submission without a lab's file: exit 0, got {rc}")
    not_gradable(res, ["None of the files the labs grade"], "a submission without a lab's file")
    check("missing" in (res or {}).get("output", ""), "its output lists what each lab was missing")

    # --- the grader fails (a malformed course file, from CUDALAB_COURSE) -------
    bad = os.path.join(tmp, "bad-course.toml")
    with open(bad, "w") as f:
        f.write('[course]\nlabs = ["09_nope"]\n')
    rc, log, res = run_job(root, solution, course_env=bad)
    check(rc == 0, f"when cudalab itself fails: exit 0, got {rc}")
    not_gradable(res, ["could not grade", "exit code 2"], "cudalab failed")
    check("09_nope" in (res or {}).get("output", ""), "its output carries the grader's log (the bad lab named)")

    # --- the example question, as PrairieLearn runs it ---------------------------
    # What its question.html submits is its lab's student file (checked by
    # test_prairielearn_question.py): lab 03's solution under that name.
    question = os.path.join(SRC, "grader", "autograder", "prairielearn", "questions", "lab03_tiling")
    with open(os.path.join(question, "tests", "course.toml"), "rb") as f:
        (qlab,) = tomllib.load(f)["course"]["labs"]
    with open(os.path.join(SRC, "labs", qlab, "lab.toml"), "rb") as f:
        qmanifest = tomllib.load(f)
    (qfile,) = qmanifest["lab"]["student_files"]
    with open(os.path.join(SRC, "solutions", qlab, qfile)) as f:
        qsolution = f.read()
    rc, log, res = run_job(root, [(qfile, qsolution)], tests_dir=os.path.join(question, "tests"))
    res = res or {}
    check(rc == 0 and res.get("gradable") is True,
          f"the example question grades {qlab}'s solution without a GPU (its course file's cpu_mode): rc {rc}, "
          f"gradable {res.get('gradable')}")
    tests = res.get("tests", [])
    check(tests and all(t["name"].startswith(qlab + ": ") for t in tests),
          f"its results are {qlab}'s checks alone (the question's course lists only that lab)")
    qcorrect = [c["name"] for c in qmanifest["check"] if c.get("kind", "correctness") == "correctness"]
    got = {t["name"].split(": ", 1)[1]: t for t in tests}
    check(all(n in got and got[n]["points"] == got[n]["max_points"] > 0 for n in qcorrect),
          "every correctness check at full marks in CPU mode")
    qmax = sum(c["points"] for c in qmanifest["check"])
    qcorrect_points = sum(c["points"] for c in qmanifest["check"] if c.get("kind", "correctness") == "correctness")
    check(abs(res.get("score", -1) - qcorrect_points / qmax) < 1e-3,
          f"score {res.get('score')} = the correctness points over the lab's ({qcorrect_points} / {qmax}): "
          "the speed checks wait for the GPU batch")
    check("CPU mode" in res.get("message", ""), f"the message says CPU mode: {res.get('message')!r}")

    # A syntax error: PrairieLearn's own example of a submission not gradable.
    broken = qsolution + "\nthis line is not CUDA\n"
    rc, log, res = run_job(root, [(qfile, broken)], tests_dir=os.path.join(question, "tests"))
    check(rc == 0, f"a submission that does not compile: exit 0, got {rc}")
    not_gradable(res, [qlab, "did not compile", "does not count", qfile, "error"], "a submission that does not compile")
    res = res or {}
    errors = res.get("format_errors", [])
    check(len(errors) > 0 and all("error" in e for e in errors) and any(qfile in e for e in errors),
          f"format_errors carry the compiler's errors, naming {qfile}: {errors}")
    check(res.get("score") == 0.0, "no score is given for it")
    check("did not compile" in res.get("output", "") and qfile in res.get("output", ""),
          "its output carries the build log")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
