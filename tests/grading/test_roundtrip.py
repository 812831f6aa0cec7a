#!/usr/bin/env python3
"""The round trip after the deadline, one platform at a time: an export in the
shape the platform downloads it (made here from lab 03's solution and a copy
that does not compile), graded in one command,

  cudalab grade --batch EXPORT --from PLATFORM --assignment hw3

in CPU mode (the course file's cpu_mode), and the platform's gradebook and the
feedback files checked: one row per student (a group's members each a row),
the late rule from the platform's time (a day late: 10% off, the points
before kept; past max_days: 0 with the reason), a student whose submission is
not in the export a row of 0 with the reason, and each student's feedback
file named by the platform's identity. Also: a Gradescope export graded
without --from is refused (exit 2) with what to add.

  - gradescope:   submission_metadata.yml and submission_<id>/ folders
  - prairielearn: the final files download (flat, prefixed names) and the
                  final submissions CSV beside it
  - classroom:    `gh classroom clone student-repos`'s <slug>-submissions/ and
                  the grades CSV

The course lists every lab with the grading seed of test_cpu_fallback.py, so
it grades in the CPU-mode gallery's folder after it: little is left to build.

  test_roundtrip.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR [PLATFORM...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish, near, rows_of  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
PLATFORMS = sys.argv[4:] or ["gradescope", "prairielearn", "classroom"]
LAB = "03_tiling"
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
DUE = "2026-12-05T23:59:00-05:00"


with open(os.path.join(SRC, "labs", LAB, "lab.toml"), "rb") as f:
    manifest = tomllib.load(f)
(FILE,) = manifest["lab"]["student_files"]
with open(os.path.join(SRC, "solutions", LAB, FILE)) as f:
    SOLUTION = f.read()
BROKEN = SOLUTION + "\nthis line is not CUDA\n"
# In CPU mode the solution has every correctness check's points; the speed checks wait for a GPU.
FULL = float(sum(c["points"] for c in manifest["check"] if c.get("kind", "correctness") == "correctness"))
MAX = float(sum(c["points"] for c in manifest["check"]))
COURSE = (f'[course]\ntitle = "round trip"\nlabs = {json.dumps(LABS)}\n'
          f'[grading]\nseed = 424242\ncpu_mode = true\n'
          f'[[assignment]]\nname = "hw3"\nlabs = ["{LAB}"]\ndue = {DUE}\nlate = {{ per_day = 0.1, max_days = 3 }}\n')


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def grade(export, platform, out, course):
    args = [CUDALAB, "grade", "--work-dir", WORK, "--course", course, "--batch", export, "--out", out,
            "--assignment", "hw3"]
    if platform:
        args += ["--from", platform]
    r = subprocess.run(args, capture_output=True, text=True)
    print(r.stdout[-4000:] + r.stderr[-4000:], flush=True)
    return r.returncode, r.stdout + r.stderr


def feedback(out, name):
    try:
        with open(os.path.join(out, "feedback", name)) as f:
            return f.read()
    except OSError:
        return ""


def check_feedback(out, name, words):
    text = feedback(out, name)
    check(text and all(w in text for w in words), f"feedback/{name} names {words}")


def gradescope(tmp, course):
    export = os.path.join(tmp, "gradescope")
    # Ruby-flavoured YAML as Gradescope's "Export Submissions" writes it.
    put(os.path.join(export, "submission_metadata.yml"), """\
submission_1001:
  :submitters:
  - :name: Alice A
    :sid: '100'
    :email: alice@u.edu
  :created_at: 2026-12-05 23:41:07.123456000 -05:00
  :score: 60.0
submission_1002:
  :submitters:
  - :name: Bob B
    :sid: '200'
    :email: bob@u.edu
  - :name: Carol C
    :sid: '201'
    :email: carol@u.edu
  :created_at: 2026-12-06 10:00:00.000000000 -05:00
  :score: 60.0
submission_1003:
  :submitters:
  - :name: Dave D
    :sid: '300'
    :email: dave@u.edu
  :created_at: 2026-12-05 20:00:00.000000000 -05:00
submission_1004:
  :submitters:
  - :name: Erin E
    :sid: '400'
    :email: erin@u.edu
  :created_at: 2026-12-05 21:00:00.000000000 -05:00
""")
    put(os.path.join(export, "submission_1001", FILE), SOLUTION)
    put(os.path.join(export, "submission_1002", FILE), SOLUTION)
    put(os.path.join(export, "submission_1003", FILE), BROKEN)
    # submission_1004 is listed but its folder is missing; submission_1999 has no entry.
    put(os.path.join(export, "submission_1999", FILE), SOLUTION)

    rc, log = grade(export, None, os.path.join(tmp, "gs-plain"), course)
    check(rc == 2 and "add --from gradescope" in log, f"a Gradescope export without --from: exit 2 and what to add, got {rc}")

    out = os.path.join(tmp, "gs-out")
    rc, log = grade(export, "gradescope", out, course)
    check(rc == 0, f"gradescope: exit 0 in CPU mode, got {rc}")
    check("submission_1999/ has no entry" in log, "gradescope: the folder without a metadata entry is reported")
    rows = {r["SID"]: r for r in rows_of(os.path.join(out, "gradebook-gradescope.csv"))}
    check(sorted(rows) == ["100", "200", "201", "300", "400"], f"gradescope: a row per student (SID): {sorted(rows)}")
    a, b, c, d, e = (rows.get(k, {}) for k in ["100", "200", "201", "300", "400"])
    check(near(a.get("Total Score"), FULL) and a.get("Email") == "alice@u.edu" and a.get("Late Penalty") == "0"
          and a.get("Lateness (H:M:S)") == "00:00:00",
          f"gradescope: Alice on time, full CPU-mode points {FULL}: {a}")
    for who, r in [("Bob", b), ("Carol", c)]:
        check(near(r.get("Total Score"), FULL * 0.9) and r.get("Late Penalty") == "0.1"
              and near(r.get("Score Before Penalty"), FULL) and "1 day late" in r.get("Reason", ""),
              f"gradescope: {who} (a group, a day late): 10% off {FULL}: {r}")
    check(near(d.get("Total Score"), 0) and d.get("Status") == "Graded", f"gradescope: Dave's file does not compile: 0: {d}")
    check(near(e.get("Total Score"), 0) and e.get("Status") == "Not graded"
          and "no folder submission_1004/" in e.get("Reason", ""), f"gradescope: Erin's folder is missing: 0 with the reason: {e}")
    check(a.get("Submission Time") == "2026-12-05T23:41:07.123-05:00" and a.get("Submission ID") == "1001",
          f"gradescope: the platform's time and submission id: {a.get('Submission Time')}, {a.get('Submission ID')}")
    check_feedback(out, "201.txt", ["Carol C", "Bob B", "assignment: hw3", "2026-12-06T10:00:00-05:00",
                                    "1 day late", "cudalab:"])
    check_feedback(out, "400.txt", ["Erin E", "not graded", "no folder submission_1004/"])
    # The grade document keeps who and when, and the penalty; grades.csv shows them at its end.
    try:
        with open(os.path.join(out, "submission_1002", "grade.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = {}
    check([s.get("sid") for s in doc.get("submission", {}).get("submitters", [])] == ["200", "201"]
          and doc.get("late", {}).get("days") == 1 and near(doc.get("late", {}).get("score_before"), FULL)
          and near(doc.get("score"), FULL * 0.9), f"gradescope: grade.json records submitters and lateness: {doc.get('late')}")
    try:
        with open(os.path.join(out, "submission_1002", "report.txt")) as f:
            report = f.read()
    except OSError:
        report = ""
    check("submitted by: Bob B" in report and "late: 1 day late" in report, "gradescope: report.txt's header says who and how late")
    grades = rows_of(os.path.join(out, "grades.csv"))
    check(grades and list(grades[0])[:3] == ["submission", "score", "max_score"]
          and list(grades[0])[-5:] == ["submitters", "submitted_at", "days_late", "late_fraction", "score_before_late"],
          f"gradescope: grades.csv keeps its columns and appends the submission's: {list(grades[0]) if grades else None}")
    # Resume: graded hand-ins are skipped, the gradebook is the same.
    before = open(os.path.join(out, "gradebook-gradescope.csv")).read()
    rc, log = grade(export, "gradescope", out, course)
    check(rc == 0 and "graded before, skipped" in log, f"gradescope: a second run resumes, rc {rc}")
    check(open(os.path.join(out, "gradebook-gradescope.csv")).read() == before, "gradescope: the same gradebook again")


def prairielearn(tmp, course):
    export = os.path.join(tmp, "prairielearn")
    zipdir = os.path.join(export, "Homework3")
    # <uid>_<instance>_<qid>_<variant>_<submission number>_<submission id>_<file>
    put(os.path.join(zipdir, f"alice@u.edu_1_lab03_tiling_1_1_500_{FILE}"), BROKEN)    # an earlier try
    put(os.path.join(zipdir, f"alice@u.edu_1_lab03_tiling_2_1_510_{FILE}"), SOLUTION)  # the final one
    put(os.path.join(zipdir, f"bob@u.edu_1_lab03_tiling_1_1_520_{FILE}"), SOLUTION)    # five days late
    header = ("UID,UIN,Username,Name,Role,Assessment,Assessment instance,Zone number,Zone title,Question,"
              "Question instance,Variant,Seed,Params,True answer,Options,submission_id,Submission date")
    put(os.path.join(export, "Homework3_final_submissions.csv"), header + "\n" + "\n".join([
        "alice@u.edu,100,,Alice A,Student,Homework 3,1,1,Z,lab03_tiling,1,1,s,{},{},{},500,2026-12-05T10:00:00-05:00",
        "alice@u.edu,100,,Alice A,Student,Homework 3,1,1,Z,lab03_tiling,1,2,s,{},{},{},510,2026-12-05T22:00:00-05:00",
        "bob@u.edu,200,,Bob B,Student,Homework 3,1,1,Z,lab03_tiling,1,1,s,{},{},{},520,2026-12-10T22:00:00-05:00",
    ]) + "\n")
    out = os.path.join(tmp, "pl-out")
    rc, log = grade(export, "prairielearn", out, course)
    check(rc == 0, f"prairielearn: exit 0 in CPU mode, got {rc}")
    rows = rows_of(os.path.join(out, "gradebook-prairielearn.csv"))
    check(rows and list(rows[0]) == ["uid", "group_name", "instance", "qid", "submission_id", "score_perc", "feedback"],
          f"prairielearn: the upload's columns: {list(rows[0]) if rows else None}")
    by = {r["uid"]: r for r in rows}
    a, b = by.get("alice@u.edu", {}), by.get("bob@u.edu", {})
    check(a.get("submission_id") == "510" and a.get("qid") == "lab03_tiling" and a.get("instance") == "1"
          and near(a.get("score_perc"), 100 * FULL / MAX), f"prairielearn: Alice's final submission graded: {a}")
    check(near(b.get("score_perc"), 0) and "more than the 3 days" in b.get("feedback", ""),
          f"prairielearn: Bob five days late, past max_days: 0 with the reason: {b}")
    check(os.path.isfile(os.path.join(out, "staged", "alice@u.edu_1", FILE)), "prairielearn: the files staged under their own names")
    check_feedback(out, "alice@u.edu.txt", ["Alice A", "assignment: hw3", "2026-12-05T22:00:00-05:00", "on time"])
    check_feedback(out, "bob@u.edu.txt", ["Bob B", "5 days late", "no points"])


def classroom(tmp, course):
    export = os.path.join(tmp, "classroom")
    repos = os.path.join(export, "hw3-submissions")
    put(os.path.join(repos, "hw3-alice", "labs", LAB, FILE), SOLUTION)
    put(os.path.join(repos, "hw3-team1", FILE), SOLUTION)
    # A commit date is the student's own claim: only the CSV's time counts.
    subprocess.run(["git", "init", "-q", os.path.join(repos, "hw3-alice")], check=False)
    header = ("assignment_name,assignment_url,starter_code_url,github_username,roster_identifier,"
              "student_repository_name,student_repository_url,submission_timestamp,points_awarded,points_available,group_name")
    put(os.path.join(export, "hw3-grades.csv"), header + "\n" + "\n".join([
        "hw3,https://classroom/a/1,https://github.com/c/s,alice,alice@u.edu,hw3-alice,https://github.com/c/hw3-alice,2026-12-06 04:00:00 UTC,0,60,",
        "hw3,https://classroom/a/1,https://github.com/c/s,bob,bob@u.edu,hw3-team1,https://github.com/c/hw3-team1,2026-12-07 06:00:00 UTC,0,60,team1",
        "hw3,https://classroom/a/1,https://github.com/c/s,carol,carol@u.edu,hw3-team1,https://github.com/c/hw3-team1,2026-12-07 06:00:00 UTC,0,60,team1",
        "hw3,https://classroom/a/1,https://github.com/c/s,dave,dave@u.edu,,,,0,60,",
    ]) + "\n")
    out = os.path.join(tmp, "cl-out")
    rc, log = grade(export, "classroom", out, course)
    check(rc == 0, f"classroom: exit 0 in CPU mode, got {rc}")
    rows = rows_of(os.path.join(out, "gradebook-classroom.csv"))
    check(rows and list(rows[0])[:10] == header.split(",")[:10], f"classroom: the grades CSV's columns first: {list(rows[0]) if rows else None}")
    by = {r["github_username"]: r for r in rows}
    check(sorted(by) == ["alice", "bob", "carol", "dave"], f"classroom: a row per student: {sorted(by)}")
    a = by.get("alice", {})
    check(near(a.get("points_awarded"), FULL) and a.get("roster_identifier") == "alice@u.edu"
          and a.get("assignment_url") == "https://classroom/a/1", f"classroom: Alice on time (04:00 UTC is 23:00 at -05:00): {a}")
    for who in ["bob", "carol"]:
        r = by.get(who, {})
        check(near(r.get("points_awarded"), FULL * 0.8) and r.get("late_days") == "2" and near(r.get("points_before_late"), FULL)
              and r.get("group_name") == "team1", f"classroom: {who} (team1, two days late): 20% off: {r}")
    check(near(by.get("dave", {}).get("points_awarded"), 0) and "did not accept" in by.get("dave", {}).get("reason", ""),
          f"classroom: Dave never accepted: 0 with the reason: {by.get('dave')}")
    check_feedback(out, "carol.txt", ["carol", "bob", "2 days late"])


tmp = tempfile.mkdtemp(prefix="cudalab-roundtrip-")
try:
    course = os.path.join(tmp, "course.toml")
    put(course, COURSE)
    for p in PLATFORMS:
        {"gradescope": gradescope, "prairielearn": prairielearn, "classroom": classroom}[p](tmp, course)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
