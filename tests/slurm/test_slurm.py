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
"""
import csv
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib

SRC, CUDALAB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
LAB = "01_coalescing"
# Every lab of the tree (a folder of labs/ with a lab.toml), as the grader finds them.
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


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
                f"[grading]\nseed = 424242\ncheck_timeout_s = 20\ncpu_mode = true\n")
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
    for l in logs:
        os.remove(l)
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    ids2 = job_ids(r.stdout)
    check(r.returncode == 0 and len(ids2) == 2 and wait_for_jobs(ids2, 300), "a second submission ran")
    logs = sorted(glob.glob(os.path.join(out, "slurm", "task-*_*.log")))
    skipped = sum(log_tail(l, 200).count("graded before, skipped") for l in logs)
    check(skipped == 3, f"the second time every task skipped what was graded ({skipped} of 3)")

    # --- by hand ----------------------------------------------------------------
    r = subprocess.run([CUDALAB, "grade", "--batch", batch, "--out", out, "--collect", "--course", course],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0 and "3 submissions" in r.stdout, "--collect by hand writes the gradebook again")
    r = subprocess.run([CUDALAB, "grade", "--batch", batch, "--slurm"], capture_output=True, text=True,
                       env=dict(env, PATH="/nonexistent"))
    check(r.returncode != 0 and "sbatch" in r.stderr, f"without sbatch, --slurm says so ({r.stderr.strip()[:120]})")
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

print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failed")
sys.exit(1 if failures else 0)
