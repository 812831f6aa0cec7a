#!/usr/bin/env python3
"""The GitHub Classroom workflow of the student release,
tools/classroom.yml:

  - its shape: on push, the job GitHub Classroom's reporter looks for
    ("run-autograding-tests"), a CUDA toolkit container (the grader compiles
    with nvcc), the apt packages ./cudalab asks for, the reporter fed by the
    grading step's result; and the second job, every check on a self-hosted
    runner labelled gpu, only where the variable CUDALAB_GPU_RUNNER is 'true';
  - its grading step's script, run here as GitHub runs it (bash -eo pipefail,
    GITHUB_OUTPUT, the GPU hidden) with ./cudalab standing for the cudalab
    program under test, on the working copy's labs/ (the skeletons): cudalab
    exits 3 (a provisional CPU-mode grade) and the step still succeeds, prints
    the points, writes a reporter result (base64 JSON: max_score, a score per
    test; the speed checks left out without a GPU) and the grade's report in
    the job summary (GITHUB_STEP_SUMMARY);
  - the same step where cudalab fails: an "error" result, the step still 0,
    the summary saying so;
  - `tools/release.py --no-gpu` puts it at .github/workflows/classroom.yml.

The course (course.toml: every lab, the grading seed) is the CPU-mode
gallery's, so it grades in that folder after it: little is left to build.

  test_classroom.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

# Absolute: the steps run in folders of their own.
SRC, CUDALAB, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
WORKFLOW = os.path.join(SRC, "tools", "classroom.yml")


def indent(line):
    return len(line) - len(line.lstrip())


def minimal_mapping(lines):
    """A block mapping: scalars, `|` blocks (dedented) and nested mappings."""
    out, i = {}, 0
    ind = min(indent(l) for l in lines if l.strip())
    while i < len(lines):
        m = re.match(r"^(\s*)([\w-]+):\s?(.*)$", lines[i])
        if not lines[i].strip() or not m or len(m.group(1)) != ind:
            i += 1
            continue
        key, value, j = m.group(2), m.group(3).strip(), i + 1
        while j < len(lines) and (not lines[j].strip() or indent(lines[j]) > ind):
            j += 1
        body = lines[i + 1:j]
        while body and not body[-1].strip():
            body.pop()
        if value == "|":
            cut = min(indent(b) for b in body if b.strip())
            out[key] = "\n".join(b[cut:] for b in body) + "\n"
        elif value:
            out[key] = value.strip("'\"")
        elif body:
            out[key] = minimal_mapping(body)
        i = j
    return out


def minimal_steps(text):
    """The steps of the workflow's job, read without PyYAML (the subset of
    YAML the workflow uses: block mappings, `- ` items, `|` blocks)."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if re.match(r"^\s*steps:\s*$", l))
    items, item_indent = [], None
    for line in lines[start + 1:]:
        if line.strip() and indent(line) <= indent(lines[start]):
            break
        m = re.match(r"^(\s*)- (.*)$", line)
        if m and (item_indent is None or len(m.group(1)) == item_indent):
            item_indent = len(m.group(1))
            items.append([])
            line = m.group(1) + "  " + m.group(2)
        if items:
            items[-1].append(line)
    return [minimal_mapping(item) for item in items]


with open(WORKFLOW) as f:
    text = f.read()
try:
    import yaml
    doc = yaml.safe_load(text)
    jobs = doc.get("jobs", {})
    job = jobs.get("run-autograding-tests", {})
    steps = job.get("steps", [])
    check("push" in doc.get("on", []), "the workflow runs on push")
    check(list(jobs) == ["run-autograding-tests", "gpu-speed-checks"],
          "two jobs: run-autograding-tests (the check run the Classroom reporter writes the points to) and "
          "gpu-speed-checks")
    check(job.get("runs-on") == "ubuntu-latest", "on GitHub's ubuntu-latest runner")
    check("nvidia/cuda" in str(job.get("container", "")) and "devel" in str(job.get("container", "")),
          f"in a CUDA toolkit container (nvcc): {job.get('container')}")
    check(doc.get("permissions", {}).get("checks") == "write", "with permission to write the check run")
    gpu = jobs.get("gpu-speed-checks", {})
    labels = gpu.get("runs-on")
    check(isinstance(labels, list) and labels[:1] == ["self-hosted"] and "gpu" in labels,
          f"gpu-speed-checks on a self-hosted runner labelled gpu (self-hosted first): {labels}")
    check("vars.CUDALAB_GPU_RUNNER == 'true'" in str(gpu.get("if", "")) and "container" not in gpu,
          f"only where the course says it has one (vars.CUDALAB_GPU_RUNNER), on the runner itself: {gpu.get('if')}")
    gpu_script = "\n".join(st.get("run", "") for st in gpu.get("steps", []))
    check("./cudalab grade" in gpu_script and "--no-cpu" in gpu_script and "GITHUB_STEP_SUMMARY" in gpu_script,
          "it grades on the GPU only (--no-cpu) and writes the job summary")
    check(doc.get("env", {}).get("CUDALAB_ASSIGNMENT") == "",
          "CUDALAB_ASSIGNMENT is empty in the release's copy (every lab): cudalab bundle sets it")
    # The parser used where there is no PyYAML reads the steps the same.
    check(minimal_steps(text) == steps, "the minimal parser reads the steps as PyYAML does")
except ImportError:
    print("(no PyYAML: the workflow's steps read with a minimal parser)")
    steps = minimal_steps(text)
    check(re.search(r"^\s*run-autograding-tests:\s*$", text, re.M) is not None, "the job run-autograding-tests")
    check(re.search(r"^\s*container: nvidia/cuda:\S*devel", text, re.M) is not None, "a CUDA toolkit container")
by_id = {s.get("id"): s for s in steps if s.get("id")}
install = next((s.get("run", "") for s in steps if "apt-get install" in s.get("run", "")), "")
with open(os.path.join(SRC, "cudalab")) as f:
    wanted = re.search(r"apt_packages=\(([^)]*)\)", f.read()).group(1).split()
check(wanted and all(re.search(r"(^|\s)" + re.escape(p) + r"(\s|$)", install) for p in wanted),
      f"the install step has every package ./cudalab asks for ({' '.join(wanted)})")
grade_step = by_id.get("cudalab", {})
script = grade_step.get("run", "")
check("./cudalab grade" in script, "the step with id cudalab runs ./cudalab grade")
reporter = next((s for s in steps if "autograding-grading-reporter" in s.get("uses", "")), {})
check(reporter.get("with", {}).get("runners") == "cudalab", "the Classroom reporter reads the runner cudalab")
check("steps.cudalab.outputs.result" in reporter.get("env", {}).get("CUDALAB_RESULTS", ""),
      "from CUDALAB_RESULTS, the grading step's result")


def run_step(script, cudalab, tmp):
    """The step as GitHub's `shell: bash` runs it, in a fresh workspace."""
    ws = os.path.join(tmp, "workspace")
    shutil.rmtree(ws, ignore_errors=True)
    os.makedirs(ws)
    body = script.replace("./cudalab ", cudalab + " ")
    path = os.path.join(tmp, "step.sh")
    with open(path, "w") as f:
        f.write(body)
    out = os.path.join(tmp, "github_output")
    open(out, "w").close()
    summary = os.path.join(tmp, "github_step_summary")
    open(summary, "w").close()
    env = dict(os.environ, GITHUB_OUTPUT=out, GITHUB_STEP_SUMMARY=summary, CUDALAB_GRADE_WORK_DIR=WORK,
               CUDA_VISIBLE_DEVICES="")
    env.pop("CUDALAB_ASSIGNMENT", None)
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", path], cwd=ws, env=env,
                       capture_output=True, text=True)
    print(r.stdout[-4000:] + r.stderr[-2000:], flush=True)
    outputs = dict(l.split("=", 1) for l in open(out).read().splitlines() if "=" in l)
    result = None
    if "result" in outputs:
        try:
            result = json.loads(base64.b64decode(outputs["result"]))
        except ValueError as e:
            print(f"result is not base64 JSON: {e}")
    return r.returncode, r.stdout + r.stderr, result, open(summary).read()


# The points the skeletons can get at most without a GPU: every correctness
# check of every lab of the course, with its weight.
with open(os.path.join(SRC, "course.toml"), "rb") as f:
    course = tomllib.load(f)
correct_max = 0.0
# The course's labs: its list, or without one every lab of the tree (grader/core/course.h).
labs = course["course"].get("labs") or sorted(
    d for d in os.listdir(os.path.join(SRC, "labs")) if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
for lab in labs:
    with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
        checks = tomllib.load(f)["check"]
    correct_max += course.get("weights", {}).get(lab, 1.0) * sum(
        c.get("points", 0) for c in checks if c.get("kind", "correctness") == "correctness")

tmp = tempfile.mkdtemp(prefix="cudalab-classroom-")
try:
    # --- the grading step on the skeletons, no GPU -----------------------------
    rc, log, result, summary = run_step(script, CUDALAB, tmp)
    check(rc == 0, f"the grading step succeeds where cudalab gives a provisional CPU-mode grade, got {rc}")
    check("## cudalab" in summary and re.search(r"^cudalab: [0-9.]+ / [0-9.]+ points", summary, re.M) is not None,
          "the job summary has the grade's report (report.txt)")
    check("No usable GPU (" in log and "provisional" in log, "cudalab graded in CPU mode, provisionally (exit 3)")
    check(re.search(r"^total: [0-9.]+ / [0-9.]+ points", log, re.M) is not None, "cudalab printed its total")
    points = re.search(r"^Points: ([0-9.]+)/([0-9.]+) \(CPU mode", log, re.M)
    check(points is not None, "the step prints the points line (Points: X/Y (CPU mode...)")
    check(result is not None and result.get("version") == 1 and isinstance(result.get("tests"), list),
          "GITHUB_OUTPUT has result=, base64 JSON in the reporter's format")
    result = result or {"tests": []}
    tests = result["tests"]
    check(tests and all({"name", "status", "score"} <= set(t) for t in tests), "each test has name, status, score")
    check(abs(result.get("max_score", -1) - correct_max) < 1e-6,
          f"max_score is the correctness checks' points ({result.get('max_score')} vs {correct_max})")
    check(not any("speed" in t["name"] or "faster" in t["name"] for t in tests),
          "the speed checks, not run without a GPU, are left out")
    check(sum(t["score"] for t in tests) == 0 and result.get("status") == "fail",
          "the skeletons score 0, and the result says fail")
    if points:
        check(float(points.group(1)) == 0 and abs(float(points.group(2)) - correct_max) < 1e-6,
              f"the points line agrees: {points.group(0)}")

    # --- cudalab fails: an error result, the step still succeeds -------------
    broken = os.path.join(tmp, "broken-cudalab")
    with open(broken, "w") as f:
        f.write("#!/bin/sh\necho 'cudalab: something broke' >&2\nexit 1\n")
    os.chmod(broken, 0o755)
    rc, log, result, summary = run_step(script, broken, tmp)
    check(rc == 0, f"where cudalab fails the step still succeeds (the reporter fails the job), got {rc}")
    check("could not grade" in summary and "exit code 1" in summary, "and the job summary says it could not grade")
    check(result is not None and result.get("status") == "error" and result.get("tests"),
          "and its result says error")
    check("Points: none" in log and "exit code 1" in log, "with a points line that says why")

    # --- the release carries it -----------------------------------------------
    rel = os.path.join(tmp, "release")
    r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "release.py"), "--source", SRC, "--out", rel,
                        "--no-gpu"], capture_output=True, text=True)
    check(r.returncode == 0, f"release.py --no-gpu exits 0 ({r.stderr.strip()[-300:]})")
    carried = os.path.join(rel, ".github", "workflows", "classroom.yml")
    check(os.path.isfile(carried) and open(carried).read() == text,
          "the release has it at .github/workflows/classroom.yml, unchanged")
    check(not os.path.exists(os.path.join(rel, "tools", "classroom.yml")), "and not in tools/")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
