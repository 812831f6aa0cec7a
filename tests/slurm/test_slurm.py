#!/usr/bin/env python3
"""`cudalab grade --batch DIR --slurm` against a real single-node Slurm
: munged, slurmctld and slurmd started here on localhost, in a
temporary folder, with nothing of the machine's own Slurm or /etc touched.
A batch of three lab-01 submissions (the solution, the skeleton, one with no
student file) is submitted with --slurm-chunk 2: an array of two tasks that
grade their shares (--shard) into one results folder, and a job after them
that collects the gradebook (--collect). CPU mode (the course sets
cpu_mode = true, the GPU is hidden), so this runs on CI. Then the same
submission again: the tasks skip what was graded.

  test_slurm.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR

Exit 77 (Meson's "skipped") where Slurm or munge is not installed or this is
not root (slurmd runs the tasks as their user and needs root to do it).

Then the round trip from a platform: a Gradescope export (submission_metadata.yml
and submission_<id>/ folders, as tests/grading/test_roundtrip.py shapes it) of a
one-lab assignment, graded through Slurm with --from gradescope --assignment
hw1. What the instructor gets is checked: gradebook-gradescope.csv with a row
per student keyed by the export's SID and email (a group's members each a row,
a listed student whose folder is missing a 0 with the reason), points out of
the assignment's maximum with the late rule from the export's time, no other
lab anywhere (one student also handed in lab 03's file), a feedback file per
student; the printed command to collect by hand writes the same gradebook, a
second submission skips what was graded, and `--from gradescope` graded here
without Slurm gives the same rows.
"""
import csv
import glob
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, failures, finish, near, rows_of, skip  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
LAB = "01_coalescing"
# Every lab of the tree (a folder of labs/ with a lab.toml), as the grader finds them.
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
# The Gradescope export's assignment: lab 01 alone, already built by the folder batch.
DUE = "2026-12-05T23:59:00-05:00"


need = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
for name in ("sbatch", "squeue", "sinfo"):
    need[name] = shutil.which(name) or ""
missing = [n for n, p in need.items() if not p or not os.access(p, os.X_OK)]
if missing:
    skip(f"{', '.join(missing)} not installed (Debian: apt-get install slurm-wlm munge)")
if os.geteuid() != 0:
    skip("a test cluster needs root (slurmd runs each task as its user)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


tmp = tempfile.mkdtemp(prefix="cudalab-slurm-")
os.chmod(tmp, 0o755)
daemons = []
env = dict(os.environ, SLURM_CONF=os.path.join(tmp, "slurm.conf"), CUDA_VISIBLE_DEVICES="")


def log_tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


def job_ids(stdout):
    """The array's and the collecting job's ids in --slurm's first line."""
    words = stdout.split()
    ids = [words[i + 1].rstrip(",") for i, w in enumerate(words[:-1]) if w in ("array", "job")]
    return list(dict.fromkeys(i for i in ids if i.isdigit()))


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def wait_for_jobs(ids, timeout):
    """Until squeue lists none of the jobs; False on timeout."""
    end = time.time() + timeout
    while time.time() < end:
        r = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-o", "%i %T"], capture_output=True, text=True,
                           env=env)
        if r.returncode == 0 and not r.stdout.strip():
            return True
        time.sleep(2)
    return False


def submit_again(argv, out):
    """The same --slurm command once more, waited for: whether it ran, and how
    many submissions its tasks skipped as graded before."""
    for l in glob.glob(os.path.join(out, "slurm", "task-*_*.log")):
        os.remove(l)
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    ids = job_ids(r.stdout)
    ran = r.returncode == 0 and len(ids) == 2 and wait_for_jobs(ids, 300)
    logs = glob.glob(os.path.join(out, "slurm", "task-*_*.log"))
    return ran, sum(read(l).count("graded before, skipped") for l in logs)


try:
    # --- a cluster of one node, here -----------------------------------------
    key = os.path.join(tmp, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    sock = os.path.join(tmp, "munge.sock")
    r = subprocess.run([need["munged"], f"--key-file={key}", f"--socket={sock}",
                        f"--pid-file={tmp}/munged.pid", f"--log-file={tmp}/munged.log",
                        f"--seed-file={tmp}/munge.seed", "--force"], capture_output=True, text=True)
    if r.returncode != 0:
        skip(f"munged did not start: {r.stderr.strip() or r.stdout.strip()}")
    os.makedirs(os.path.join(tmp, "state"))
    os.makedirs(os.path.join(tmp, "spool"))
    host = socket.gethostname()
    cpus = os.cpu_count() or 1
    with open(env["SLURM_CONF"], "w") as f:
        f.write(f"""ClusterName=cudalabtest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=cudalabnode NodeAddr=127.0.0.1 NodeHostname={host} CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=cudalab Nodes=cudalabnode Default=YES MaxTime=INFINITE State=UP
""")
    daemons.append(subprocess.Popen([need["slurmctld"], "-D", "-i"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))
    time.sleep(1)
    daemons.append(subprocess.Popen([need["slurmd"], "-D", "-N", "cudalabnode"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))
    up = False
    for _ in range(60):
        r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env)
        if r.stdout.strip() == "idle":
            up = True
            break
        time.sleep(0.5)
    if not up:
        skip("the test cluster did not come up:\n" + log_tail(f"{tmp}/slurmctld.log") + log_tail(f"{tmp}/slurmd.log"))
    print(f"a one-node Slurm is up in {tmp}", flush=True)

    # --- the batch: three lab-01 submissions ---------------------------------
    with open(os.path.join(SRC, "labs", LAB, "lab.toml"), "rb") as f:
        manifest = tomllib.load(f)
    correctness = sum(c["points"] for c in manifest["check"] if c.get("kind", "correctness") == "correctness")
    batch = os.path.join(tmp, "batch")
    for name, base in (("alice", "solutions"), ("bob", "labs")):
        os.makedirs(os.path.join(batch, name))
        for f in manifest["lab"]["student_files"]:
            shutil.copy(os.path.join(SRC, base, LAB, f), os.path.join(batch, name))
    os.makedirs(os.path.join(batch, "carol"))
    with open(os.path.join(batch, "carol", "notes.txt"), "w") as f:
        f.write("forgot the code\n")
    # The CPU-mode gallery's course (every lab, its seed), so that its
    # grading folder, where it exists, is shared: less to build.
    course = os.path.join(tmp, "course.toml")
    with open(course, "w") as f:
        f.write(f'[course]\ntitle = "slurm"\nlabs = {json.dumps(LABS)}\n'
                f"[grading]\nseed = 424242\ncheck_timeout_s = 20\ncpu_mode = true\n"
                f'[[assignment]]\nname = "hw1"\nlabs = ["{LAB}"]\ndue = {DUE}\n'
                f"late = {{ per_day = 0.1, max_days = 3 }}\n")
    out = os.path.join(tmp, "results")
    for d in (tmp, batch, out):
        os.makedirs(d, exist_ok=True)
    argv = [CUDALAB, "grade", "--batch", batch, "--out", out, "--work-dir", WORK, "--course", course, "--slurm",
            "--slurm-chunk", "2", "--partition=cudalab", "--time=30"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    print(r.stdout + r.stderr, flush=True)
    check(r.returncode == 0, f"cudalab grade --slurm exits 0 (got {r.returncode})")
    ids = job_ids(r.stdout)
    check(len(ids) == 2, f"it names the job array and the collecting job ({ids})")
    check("2 tasks" in r.stdout, "three submissions in chunks of two: an array of two tasks")
    done = wait_for_jobs(ids, 900)
    check(done, "the jobs finished within 15 minutes")
    logs = sorted(glob.glob(os.path.join(out, "slurm", "task-*_*.log")))
    check(len(logs) == 2, f"each array task wrote its log ({len(logs)}: {[os.path.basename(l) for l in logs]})")
    shares = [log_tail(l, 200) for l in logs]
    check(any("shard 0/2" in s for s in shares) and any("shard 1/2" in s for s in shares),
          "the tasks graded shares 0/2 and 1/2")
    for l in logs:
        print(f"--- {os.path.basename(l)}:\n{log_tail(l, 8)}", flush=True)
    collect_logs = glob.glob(os.path.join(out, "slurm", "collect-*.log"))
    check(len(collect_logs) == 1, "the collecting job ran after the array")
    if collect_logs:
        print(f"--- collect:\n{log_tail(collect_logs[0], 8)}", flush=True)
    rows = {}
    if os.path.exists(os.path.join(out, "grades.csv")):
        with open(os.path.join(out, "grades.csv")) as f:
            for row in csv.DictReader(f):
                rows[row[next(iter(row))]] = row
    check(sorted(rows) == ["alice", "bob", "carol"], f"grades.csv has one row per submission ({sorted(rows)})")
    lab_col = LAB
    if rows:
        full = float(rows["alice"][lab_col]) == correctness
        check(full, f"the solution has every correctness point ({rows['alice'][lab_col]} of {correctness})")
        if not full:  # what took the points, from her results.json
            try:
                with open(os.path.join(out, "alice", "results.json")) as f:
                    for t in json.load(f).get("tests", []):
                        if t.get("name", "").startswith(LAB) and t.get("score", 0) < t.get("max_score", 0):
                            print(f"      {t['name']}: {t.get('output', '')[:300]}", flush=True)
            except (OSError, ValueError) as e:
                print(f"      (no results.json: {e})")
        check(float(rows["bob"][lab_col]) == 0, f"the skeleton has none ({rows['bob'][lab_col]})")
        check(float(rows["carol"][lab_col]) == 0, f"the submission without the file has none ({rows['carol'][lab_col]})")
    for name in ("alice", "bob", "carol"):
        check(os.path.exists(os.path.join(out, name, "results.json")), f"{name}'s results.json is in the shared folder")
    check(os.path.exists(os.path.join(out, "index.html")), "the collecting job wrote index.html")

    # --- again: what was graded is skipped -----------------------------------
    ran, skipped = submit_again(argv, out)
    check(ran, "a second submission ran")
    check(skipped == 3, f"the second time every task skipped what was graded ({skipped} of 3)")

    # --- by hand ----------------------------------------------------------------
    r = subprocess.run([CUDALAB, "grade", "--batch", batch, "--out", out, "--collect", "--course", course],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0 and "3 submissions" in r.stdout, "--collect by hand writes the gradebook again")
    r = subprocess.run([CUDALAB, "grade", "--batch", batch, "--slurm"], capture_output=True, text=True,
                       env=dict(env, PATH="/nonexistent"))
    check(r.returncode != 0 and "sbatch" in r.stderr, f"without sbatch, --slurm says so ({r.stderr.strip()[:120]})")

    # --- the round trip from Gradescope: an export of assignment hw1 --------
    export = os.path.join(tmp, "gradescope")
    os.makedirs(export)
    # Who handed in what and when, as submission_metadata.yml records it (Ruby-flavoured YAML).
    handins = [("submission_2001", [("Alice A", "100", "alice@u.edu")], "2026-12-05 23:41:07.123456000"),
               ("submission_2002", [("Bob B", "200", "bob@u.edu"), ("Carol C", "201", "carol@u.edu")],
                "2026-12-06 10:00:00.000000000"),  # a day late
               ("submission_2003", [("Dave D", "300", "dave@u.edu")], "2026-12-05 20:00:00.000000000"),
               ("submission_2004", [("Erin E", "400", "erin@u.edu")], "2026-12-05 21:00:00.000000000")]
    yml = []
    for folder, people, when in handins:
        yml += [f"{folder}:", "  :submitters:"]
        for name, sid, email in people:
            yml += [f"  - :name: {name}", f"    :sid: '{sid}'", f"    :email: {email}"]
        yml.append(f"  :created_at: {when} -05:00")
    with open(os.path.join(export, "submission_metadata.yml"), "w") as f:
        f.write("\n".join(yml) + "\n")
    (student_file,) = manifest["lab"]["student_files"]
    for folder, base in (("submission_2001", "solutions"), ("submission_2002", "solutions"),
                         ("submission_2003", "labs")):
        os.makedirs(os.path.join(export, folder))
        shutil.copy(os.path.join(SRC, base, LAB, student_file), os.path.join(export, folder))
    # Alice hands in her whole repository: lab 03's file is not hw1's and must not show.
    other = "03_tiling"
    with open(os.path.join(SRC, "labs", other, "lab.toml"), "rb") as f:
        other_files = tomllib.load(f)["lab"]["student_files"]
    for name in other_files:
        shutil.copy(os.path.join(SRC, "solutions", other, name), os.path.join(export, "submission_2001"))
    # submission_2004 is listed, its folder missing: Erin's row is a 0 with the reason.
    max_points = float(sum(c["points"] for c in manifest["check"]))
    gs_out = os.path.join(tmp, "gs-results")
    gs_argv = [CUDALAB, "grade", "--batch", export, "--from", "gradescope", "--assignment", "hw1", "--out", gs_out,
               "--work-dir", WORK, "--course", course, "--slurm", "--slurm-chunk", "2", "--partition=cudalab",
               "--time=30"]
    r = subprocess.run(gs_argv, capture_output=True, text=True, env=env)
    print(r.stdout + r.stderr, flush=True)
    ids = job_ids(r.stdout)
    check(r.returncode == 0 and len(ids) == 2 and "4 submissions" in r.stdout and "2 tasks" in r.stdout,
          f"gradescope --slurm: the export's four hand-ins in an array of two tasks and a collecting job ({ids})")
    by_hand = [l.split(":", 1)[1].strip() for l in r.stdout.splitlines() if l.strip().startswith("by hand:")]
    check(by_hand and "--from gradescope" in by_hand[0] and "--assignment hw1" in by_hand[0],
          f"gradescope --slurm: the command to collect by hand reads the export as the tasks do: {by_hand}")
    check(wait_for_jobs(ids, 900), "gradescope: the jobs finished within 15 minutes")
    logs = sorted(glob.glob(os.path.join(gs_out, "slurm", "task-*_*.log")))
    task_text = [read(l) for l in logs]
    for l in logs:
        print(f"--- {os.path.basename(l)}:\n{log_tail(l, 8)}", flush=True)
    check(len(logs) == 2 and all("--from gradescope" in t and "--assignment hw1" in t for t in task_text),
          "gradescope: each task graded its share as hw1 of the export and names the collecting command so")
    book_path = os.path.join(gs_out, "gradebook-gradescope.csv")
    collect_logs = glob.glob(os.path.join(gs_out, "slurm", "collect-*.log"))
    check(len(collect_logs) == 1 and "gradescope gradebook: " + book_path in read(collect_logs[0]),
          "gradescope: the collecting job wrote the Gradescope gradebook")
    if collect_logs:
        print(f"--- collect:\n{log_tail(collect_logs[0], 12)}", flush=True)
    book = rows_of(book_path)
    rows = {r["SID"]: r for r in book}
    check(sorted(rows) == ["100", "200", "201", "300", "400"], f"gradescope: a row per student, by SID: {sorted(rows)}")
    emails = {k: r.get("Email") for k, r in rows.items()}
    check(emails == {sid: email for _, people, _ in handins for _, sid, email in people},
          f"gradescope: each row the export's email for its SID: {emails}")
    check(all(near(r.get("Max Points"), max_points) for r in book),
          f"gradescope: every row out of hw1's maximum, lab 01's {max_points:g} points: "
          f"{[r.get('Max Points') for r in book]}")
    a, b, c, d, e = (rows.get(k, {}) for k in ["100", "200", "201", "300", "400"])
    check(near(a.get("Total Score"), correctness) and a.get("Status") == "Graded" and a.get("Late Penalty") == "0"
          and a.get("Submission ID") == "2001" and a.get("Submission Time") == "2026-12-05T23:41:07.123-05:00",
          f"gradescope: Alice on time, every correctness point ({correctness:g}): {a}")
    for who, row in (("Bob", b), ("Carol", c)):
        check(near(row.get("Total Score"), correctness * 0.9) and near(row.get("Score Before Penalty"), correctness)
              and row.get("Late Penalty") == "0.1" and row.get("Submission ID") == "2002",
              f"gradescope: {who} (a group, a day late by the export's time): 10% off: {row}")
    check(near(d.get("Total Score"), 0) and d.get("Status") == "Graded", f"gradescope: Dave's skeleton: 0: {d}")
    check(near(e.get("Total Score"), 0) and e.get("Status") == "Not graded"
          and "no folder submission_2004/" in e.get("Reason", ""), f"gradescope: Erin's folder is missing: 0: {e}")
    feedback = sorted(os.listdir(os.path.join(gs_out, "feedback"))) if os.path.isdir(
        os.path.join(gs_out, "feedback")) else []
    check(feedback == ["100.txt", "200.txt", "201.txt", "300.txt", "400.txt"],
          f"gradescope: one feedback file per student, named by SID: {feedback}")
    carol = read(os.path.join(gs_out, "feedback", "201.txt"))
    check("Carol C" in carol and "Bob B" in carol and "assignment: hw1" in carol and "1 day late" in carol,
          "gradescope: Carol's feedback names her, her partner, the assignment and the late day")
    doc = {}
    try:
        with open(os.path.join(gs_out, "submission_2002", "grade.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        pass
    check([s.get("sid") for s in doc.get("submission", {}).get("submitters", [])] == ["200", "201"]
          and doc.get("assignment") == "hw1" and [l.get("id") for l in doc.get("labs", [])] == [LAB],
          f"gradescope: the task's grade.json keeps who handed it in, for hw1, lab 01 alone: "
          f"{doc.get('assignment')}, {[l.get('id') for l in doc.get('labs', [])]}")
    # Labs outside the assignment: in no export the instructor gets.
    outside = [l for l in LABS if l != LAB]
    texts = {os.path.relpath(p, gs_out): read(p) for p in
             [book_path, os.path.join(gs_out, "grades.csv")]
             + glob.glob(os.path.join(gs_out, "feedback", "*.txt"))
             + glob.glob(os.path.join(gs_out, "submission_*", "grade.json"))}
    leaks = sorted(f"{name}: {l}" for name, t in texts.items() for l in outside + other_files if l in t)
    check(len(texts) >= 10 and not leaks, f"gradescope: no lab outside hw1 in {len(texts)} files: {leaks}")

    # The printed command collects by hand: the same gradebook.
    if by_hand:
        r = subprocess.run(shlex.split(by_hand[0]), capture_output=True, text=True, env=env)
        check(r.returncode == 0 and rows_of(book_path) == book,
              f"gradescope: the printed command collects by hand: the same gradebook (rc {r.returncode})")

    # Again: the tasks skip what was graded, the gradebook is the same.
    ran, skipped = submit_again(gs_argv, gs_out)
    check(ran, "gradescope: a second submission ran")
    check(skipped == 3, f"gradescope: the second time the tasks skipped the three graded hand-ins ({skipped})")
    check(rows_of(book_path) == book, "gradescope: the second collection wrote the same gradebook")

    # The same export graded here, without Slurm: the same rows.
    local = os.path.join(tmp, "gs-local")
    r = subprocess.run([CUDALAB, "grade", "--batch", export, "--from", "gradescope", "--assignment", "hw1", "--out",
                        local, "--work-dir", WORK, "--course", course], capture_output=True, text=True, env=env)
    print(r.stdout[-3000:] + r.stderr[-3000:], flush=True)
    here = rows_of(os.path.join(local, "gradebook-gradescope.csv"))
    check(r.returncode == 0 and here == book,
          "gradescope: graded without Slurm, the same gradebook rows"
          + ("" if here == book else f"\n  slurm: {book}\n  here:  {here}"))
    here_feedback = sorted(os.listdir(os.path.join(local, "feedback"))) if os.path.isdir(
        os.path.join(local, "feedback")) else []
    check(here_feedback == feedback, f"gradescope: and the same feedback files ({here_feedback})")
finally:
    for d in reversed(daemons):
        d.terminate()
        try:
            d.wait(timeout=20)
        except subprocess.TimeoutExpired:
            d.kill()
    try:
        with open(os.path.join(tmp, "munged.pid")) as f:
            os.kill(int(f.read().strip()), 15)
    except (OSError, ValueError):
        pass
    if failures:
        print(f"logs kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)

finish()
