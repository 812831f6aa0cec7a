#!/usr/bin/env python3
"""`cudalab bundle`: each platform's bundle of an assignment, well formed,
without a build of the labs and without a GPU:

  - gradescope: OUT/<assignment>-gradescope.zip has setup.sh and run_autograder
    at its root, executable, that run grader/autograder/'s scripts (in the zip,
    executable) with the assignment and the zip's course file; that course file
    grades the assignment's labs alone, with the course's seed; the zip holds the
    labs and solutions of the assignment and of the labs they reference (their
    tests compile those solutions), and no other lab's, no build folder, no
    results, no tests/, docs/ or simt/tests/ (a tiled matmul); the same course
    gives the same zip, byte for byte; and the tree configures (meson setup):
    nothing the build reads is missing. --end-to-end also grades lab 03's
    solution through the unpacked zip's run_autograder, laid out as Gradescope
    lays it out, in CPU mode: results.json has lab 03's checks only.
  - prairielearn: one question per lab of the assignment, each held to every
    rule of the example question (test_prairielearn_question.py: info.json valid
    against PrairieLearn's schema, question.html editing the lab's student files
    from its skeletons, tests/course.toml in CPU mode with the seed); the same as
    the example question where they ask the same (lab 03); uuids that stay the
    same when bundled again and differ between assignments.
  - classroom: the workflow parses, has the two jobs (the hosted CPU-mode one and
    the GPU one on a self-hosted runner labelled gpu, gated by the variable
    CUDALAB_GPU_RUNNER), carries the assignment, and differs from
    tools/classroom.yml only there.
  - errors: an unknown assignment names the course's, an unknown platform the
    three, a folder that is not empty is refused without --force.

  test_bundle.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR [--end-to-end]
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
END_TO_END = "--end-to-end" in sys.argv[4:]
HERE = os.path.dirname(os.path.abspath(__file__))


def bundle(*args):
    r = subprocess.run([CUDALAB, "bundle", *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:] + r.stderr[-2000:], flush=True)
    return r


def lab_toml(lab):
    with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
        return tomllib.load(f)["lab"]


def with_references(labs):
    """The labs and, transitively, the labs whose solutions their tests compile."""
    seen, todo = set(labs), list(labs)
    while todo:
        for r in lab_toml(todo.pop()).get("references", []):
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return seen


with open(os.path.join(SRC, "course.toml"), "rb") as f:
    COURSE = tomllib.load(f)
SEED = COURSE.get("grading", {}).get("seed")
ASSIGNMENTS = {a["name"]: a["labs"] for a in COURSE.get("assignment", [])}
ALL_LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs"))
                  if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))

tmp = tempfile.mkdtemp(prefix="cudalab-bundle-")
try:
    # A course file of the tree's, plus an assignment of two labs and a
    # weight: what a real course's bundles look like beyond hw3's one lab.
    # cpu_mode = true, so that the end-to-end grade runs without a GPU.
    with open(os.path.join(SRC, "course.toml")) as f:
        text = f.read()
    text = text.replace("[weights]\n", '[weights]\n"04_transpose" = 2.0\n', 1)
    text = text.replace("[grading]\n", "[grading]\ncpu_mode = true\n", 1)
    text += ('\n[[assignment]]\nname = "pair"\nlabs = ["04_transpose", "01_coalescing"]\n'
             'due = 2026-12-05T23:59:00-05:00\nlate = { per_day = 0.1, max_days = 3 }\n')
    course_file = os.path.join(tmp, "course.toml")
    with open(course_file, "w") as f:
        f.write(text)

    # --- errors -------------------------------------------------------------------
    r = bundle("--assignment", "hw9", "--platform", "gradescope", "--out", os.path.join(tmp, "x"))
    check(r.returncode == 2 and all(a in r.stderr for a in ASSIGNMENTS) and "hw9" in r.stderr,
          f"an unknown assignment is a usage error that names the course's ({', '.join(ASSIGNMENTS)}): "
          f"{r.stderr.strip()[:200]}")
    r = bundle("--assignment", "hw3", "--platform", "moodle", "--out", os.path.join(tmp, "x"))
    check(r.returncode == 2 and all(p in r.stderr for p in ("gradescope", "prairielearn", "classroom")),
          f"an unknown platform is a usage error that lists the three: {r.stderr.strip()[:200]}")
    check(not os.path.exists(os.path.join(tmp, "x")), "and neither writes anything")
    full = os.path.join(tmp, "full")
    os.makedirs(full)
    open(os.path.join(full, "notes.txt"), "w").close()
    r = bundle("--assignment", "hw3", "--platform", "classroom", "--out", full)
    check(r.returncode == 2 and "--force" in r.stderr and os.listdir(full) == ["notes.txt"],
          f"a folder that is not empty is refused, --force named: {r.stderr.strip()[:200]}")
    r = bundle("--assignment", "hw3", "--platform", "classroom", "--out", full, "--force")
    check(r.returncode == 0 and os.path.isfile(os.path.join(full, ".github", "workflows", "classroom.yml"))
          and os.path.isfile(os.path.join(full, "notes.txt")),
          "with --force the bundle is written beside what the folder had")
    r = bundle("--assignment", "hw3", "--platform", "classroom", "--image", "x/y", "--out", os.path.join(tmp, "y"))
    check(r.returncode == 2 and "--image" in r.stderr, "--image is refused where the platform is not PrairieLearn")

    # --- gradescope ---------------------------------------------------------------
    gs = os.path.join(tmp, "gs")
    for assignment in ("hw3", "pair"):
        r = bundle("--assignment", assignment, "--platform", "gradescope", "--out", gs, "--course", course_file,
                   "--force")
        check(r.returncode == 0, f"bundle {assignment} for gradescope exits 0")
        zpath = os.path.join(gs, f"{assignment}-gradescope.zip")
        check(os.path.isfile(zpath), f"it writes {os.path.relpath(zpath, tmp)}")
        if not os.path.isfile(zpath):
            continue
        check("no GPU" in r.stdout and "cpu_mode = true" in r.stdout,
              "its output says Gradescope's runners have no GPU, and that this course grades in CPU mode there")
        labs = [lab for lab in ALL_LABS if lab in (ASSIGNMENTS.get(assignment) or ["04_transpose", "01_coalescing"])]
        with zipfile.ZipFile(zpath) as z:
            infos = {i.filename: i for i in z.infolist()}
            names = set(infos)

            def executable(name):
                return name in infos and stat.S_ISREG(infos[name].external_attr >> 16) and \
                    (infos[name].external_attr >> 16) & 0o111 == 0o111

            for name in ("setup.sh", "run_autograder"):
                check(executable(name), f"{assignment}: {name} at the zip's root, an executable file")
            for name in ("grader/autograder/setup.sh", "grader/autograder/run_autograder", "cudalab"):
                check(executable(name), f"{assignment}: {name} in the zip, executable")
            setup, run = z.read("setup.sh").decode(), z.read("run_autograder").decode()
            check("grader/autograder/setup.sh" in setup and "grader/autograder/run_autograder" in run,
                  f"{assignment}: the root's scripts run grader/autograder/'s (not copies of them)")
            for what, script in (("setup.sh", setup), ("run_autograder", run)):
                check(f"CUDALAB_ASSIGNMENT={assignment}\n" in script and "CUDALAB_COURSE=" in script
                      and "/course.toml\n" in script,
                      f"{assignment}: {what} sets CUDALAB_ASSIGNMENT={assignment} and the zip's course.toml")
            check("/source/" in run, f"{assignment}: run_autograder finds the tree in source/ beside it "
                                     "(Gradescope copies it to /autograder/run_autograder)")
            course = tomllib.loads(z.read("course.toml").decode())
            check(course["course"]["labs"] == labs and [a["name"] for a in course["assignment"]] == [assignment]
                  and course["assignment"][0]["labs"] == labs,
                  f"{assignment}: its course.toml grades the assignment's labs alone ({labs})")
            check(course["grading"].get("seed") == SEED and course["grading"].get("cpu_mode") is True,
                  f"{assignment}: with the course's grading seed and settings")
            if assignment == "pair":
                check(course.get("weights") == {"04_transpose": 2.0}, f"pair: with its labs' weights only")
                a = course["assignment"][0]
                check(str(a.get("due")) == "2026-12-05 23:59:00-05:00" and a.get("late") ==
                      {"per_day": 0.1, "max_days": 3}, f"pair: with its due date and late rule: {a}")
            wanted = with_references(labs)
            for top in ("labs", "solutions"):
                have = {n.split("/")[1] for n in names if n.startswith(top + "/") and n.count("/") > 1}
                check(have == wanted, f"{assignment}: {top}/ holds the assignment's labs and those they "
                                      f"reference, no other: {sorted(have)} vs {sorted(wanted)}")
            for lab in wanted:
                for f in lab_toml(lab)["student_files"]:
                    check(f"solutions/{lab}/{f}" in names, f"{assignment}: solutions/{lab}/{f} is there")
            banned = [n for n in names if any(p.startswith("build") or p in ("results", "__pycache__", ".git")
                                              for p in n.split("/")[:-1])
                      or n.split("/")[0] in ("tests", "docs", "handouts", "calibration")
                      or n.startswith("simt/tests/") or n.endswith((".o", ".pyc"))]
            check(banned == [], f"{assignment}: no build folders, results, tests/, docs/ or simt/tests/: {banned[:5]}")
            for top in ("harness/meson.build", "grader/meson.build", "simt/meson.build", "meson.build",
                        "meson_options.txt", "tools/labinfo.py", "course/include"):
                check(any(n == top or n.startswith(top + "/") for n in names), f"{assignment}: has {top}")
        first = open(zpath, "rb").read()
        bundle("--assignment", assignment, "--platform", "gradescope", "--out", gs, "--course", course_file, "--force")
        check(open(zpath, "rb").read() == first, f"{assignment}: bundled again, the same zip byte for byte")

    # The tree configures: every file the build reads is in the zip.
    tree = os.path.join(tmp, "autograder", "source")
    with zipfile.ZipFile(os.path.join(gs, "hw3-gradescope.zip")) as z:
        for info in z.infolist():
            z.extract(info, tree)
            os.chmod(os.path.join(tree, info.filename), (info.external_attr >> 16) & 0o777)
    if shutil.which("meson") and shutil.which("ninja"):
        r = subprocess.run(["meson", "setup", os.path.join(tmp, "bundle-build"), tree], capture_output=True,
                           text=True, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        check(r.returncode == 0, "the unpacked zip's tree configures (meson setup): no file the build reads is "
                                 "missing" + ("" if r.returncode == 0 else ":\n" + (r.stdout + r.stderr)[-1500:]))
        shutil.rmtree(os.path.join(tmp, "bundle-build"), ignore_errors=True)
    else:
        print("(no meson: the unpacked tree is not configured)")

    if END_TO_END:
        # As Gradescope lays it out: the zip in /autograder/source,
        # run_autograder copied to /autograder, the submission beside.
        root = os.path.join(tmp, "autograder")
        shutil.copy2(os.path.join(tree, "run_autograder"), os.path.join(root, "run_autograder"))
        os.makedirs(os.path.join(root, "submission"))
        shutil.copy(os.path.join(SRC, "solutions", "03_tiling", "matmul_tiled.cu"), os.path.join(root, "submission"))
        shutil.copy(os.path.join(SRC, "solutions", "01_coalescing", "coalescing.cu"),
                    os.path.join(root, "submission"))  # another lab's file: not this assignment's
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUDALAB_")}
        env.update(AUTOGRADER_ROOT=root, CUDALAB_GRADE_WORK_DIR=WORK, CUDA_VISIBLE_DEVICES="")
        if "CUDALAB_GRADE_GPU_ARCH" in os.environ:
            env["CUDALAB_GRADE_GPU_ARCH"] = os.environ["CUDALAB_GRADE_GPU_ARCH"]
        r = subprocess.run([os.path.join(root, "run_autograder")], env=env, capture_output=True, text=True,
                           timeout=3000)
        print(r.stdout[-3000:] + r.stderr[-1500:], flush=True)
        check(r.returncode == 0, f"the bundled run_autograder exits 0 ({r.returncode})")
        try:
            res = json.load(open(os.path.join(root, "results", "results.json")))
        except (OSError, ValueError) as e:
            res = {}
            check(False, f"it writes results/results.json: {e}")
        tests = res.get("tests", [])
        labs_graded = sorted({t.get("name", "").split(":")[0] for t in tests})
        check(labs_graded == ["03_tiling"], f"results.json has lab 03's checks only (not lab 01's, also "
                                            f"submitted): {labs_graded}")
        cudalab = res.get("extra_data", {}).get("cudalab", {})
        check(cudalab.get("mode") == "cpu", f"graded in CPU mode (the course file allows it): {cudalab.get('mode')}")
        check(res.get("score", 0) > 0, f"the solution scores: {res.get('score')}")

    # --- prairielearn -------------------------------------------------------------
    pl = os.path.join(tmp, "pl")
    r = bundle("--assignment", "pair", "--platform", "prairielearn", "--out", pl, "--course", course_file)
    check(r.returncode == 0, "bundle pair for prairielearn exits 0")
    qroot = os.path.join(pl, "questions")
    check(sorted(os.listdir(qroot)) == ["pair_01_coalescing", "pair_04_transpose"] if os.path.isdir(qroot) else False,
          "one question per lab of the assignment, named <assignment>_<lab>")
    r = subprocess.run([sys.executable, os.path.join(HERE, "test_prairielearn_question.py"), SRC, qroot, course_file],
                       capture_output=True, text=True)
    print("".join(l + "\n" for l in r.stdout.splitlines() if not l.startswith("ok")), end="")
    check(r.returncode == 0, "every question meets the example question's rules (test_prairielearn_question.py: "
                             "info.json valid against PrairieLearn's schema, the editors the lab's student files "
                             "from its skeletons, CPU mode, the seed)")
    for lab in ("01_coalescing", "04_transpose"):
        qdir = os.path.join(qroot, f"pair_{lab}")
        files = sorted(f for f in os.listdir(qdir) if os.path.isfile(os.path.join(qdir, f)))
        check(files == sorted(["info.json", "question.html"] + lab_toml(lab)["student_files"]),
              f"pair_{lab}: its files are info.json, question.html and the lab's student files: {files}")
    uuids = {q: json.load(open(os.path.join(qroot, q, "info.json")))["uuid"] for q in os.listdir(qroot)}
    bundle("--assignment", "pair", "--platform", "prairielearn", "--out", pl, "--course", course_file, "--force")
    again = {q: json.load(open(os.path.join(qroot, q, "info.json")))["uuid"] for q in os.listdir(qroot)}
    check(again == uuids, "bundled again, each question keeps its uuid")

    r = bundle("--assignment", "hw3", "--platform", "prairielearn", "--out", pl, "--force",
               "--image", "example.org/course/cudalab:2026")
    check(r.returncode == 0, "bundle hw3 for prairielearn, into the same folder, exits 0")
    mine, example = os.path.join(qroot, "hw3_03_tiling"), os.path.join(
        SRC, "grader", "autograder", "prairielearn", "questions", "lab03_tiling")
    info, example_info = (json.load(open(os.path.join(d, "info.json"))) for d in (mine, example))
    check(info["uuid"] not in uuids.values() and info["uuid"] != example_info["uuid"],
          "a question of another assignment has a uuid of its own")
    ext = dict(example_info["externalGradingOptions"], image="example.org/course/cudalab:2026")
    check(info["externalGradingOptions"] == ext,
          "hw3_03_tiling is graded as the example question is (its externalGradingOptions), with --image's image")
    check(info["title"] == example_info["title"] and info["type"] == example_info["type"]
          and info["gradingMethod"] == "External", "and has its title, type and grading method")
    check(open(os.path.join(mine, "matmul_tiled.cu"), "rb").read() ==
          open(os.path.join(example, "matmul_tiled.cu"), "rb").read(), "and its skeleton")
    ours, theirs = (tomllib.load(open(os.path.join(d, "tests", "course.toml"), "rb")) for d in (mine, example))
    check(ours["course"]["labs"] == theirs["course"]["labs"] and ours["grading"] == theirs["grading"],
          f"and its tests/course.toml's labs and grading settings: {ours['grading']}")
    check(sorted(os.listdir(qroot)) == ["hw3_03_tiling", "pair_01_coalescing", "pair_04_transpose"],
          "the other assignment's questions stay beside it")

    # --- classroom ----------------------------------------------------------------
    cl = os.path.join(tmp, "cl")
    r = bundle("--assignment", "hw3", "--platform", "classroom", "--out", cl)
    check(r.returncode == 0, "bundle hw3 for classroom exits 0")
    path = os.path.join(cl, ".github", "workflows", "classroom.yml")
    with open(path) as f:
        text = f.read()
    with open(os.path.join(SRC, "tools", "classroom.yml")) as f:
        template = f.read()
    diff = [(a, b) for a, b in zip(template.splitlines(), text.splitlines()) if a != b]
    check(len(template.splitlines()) == len(text.splitlines()) and
          diff == [('  CUDALAB_ASSIGNMENT: ""', '  CUDALAB_ASSIGNMENT: "hw3"')],
          f"the workflow is tools/classroom.yml with CUDALAB_ASSIGNMENT set, nothing else: {diff}")
    try:
        import yaml
    except ImportError:
        yaml = None
        print("(no PyYAML: the workflow's structure is not checked here; test_classroom.py reads it)")
    if yaml:
        doc = yaml.safe_load(text)
        jobs = doc.get("jobs", {})
        check(list(jobs) == ["run-autograding-tests", "gpu-speed-checks"], f"two jobs: {list(jobs)}")
        check(doc.get("env", {}).get("CUDALAB_ASSIGNMENT") == "hw3", "the workflow's env carries the assignment")
        cpu, gpu = jobs.get("run-autograding-tests", {}), jobs.get("gpu-speed-checks", {})
        check(cpu.get("runs-on") == "ubuntu-latest", "the correctness job on GitHub's hosted runner")
        labels = gpu.get("runs-on")
        check(isinstance(labels, list) and labels[:1] == ["self-hosted"] and "gpu" in labels and "linux" in labels,
              f"the GPU job on a self-hosted Linux runner labelled gpu: {labels}")
        check("vars.CUDALAB_GPU_RUNNER == 'true'" in str(gpu.get("if", "")),
              f"and only where the variable CUDALAB_GPU_RUNNER is 'true': {gpu.get('if')}")
        for name, job in (("run-autograding-tests", cpu), ("gpu-speed-checks", gpu)):
            runs = "\n".join(s.get("run", "") for s in job.get("steps", []))
            check('--assignment "$CUDALAB_ASSIGNMENT"' in runs and "GITHUB_STEP_SUMMARY" in runs,
                  f"{name}: grades the assignment and writes the job summary")
        gpu_runs = "\n".join(s.get("run", "") for s in gpu.get("steps", []))
        check("--no-cpu" in gpu_runs and "--cpu" not in gpu_runs.replace("--no-cpu", ""),
              "the GPU job grades on the GPU only (--no-cpu)")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
