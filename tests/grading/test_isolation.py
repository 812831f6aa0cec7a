#!/usr/bin/env python3
"""A submission meets nothing but its own files: nothing of a classmate graded
before it in the same grading folder, and nothing of the course's solutions.

  test_isolation.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR [--gpu]

1. A classmate's lab-03 solution, marked with a line of its own, is graded.
2. The folder is searched: no file of a slot that builds submissions holds a
   solution's kernel (by its name in namespace ref, as any object or binary
   would carry it) or a line of a solution's source that its skeleton lacks;
   no slot holds a CPU-mode translation of a solution (cpu-ref-...).
3. Submissions that embed, with an assembler .incbin (no #include for the
   policy to list), a file of the build folder they are built in and throw
   its bytes as their error message: the classmate's translation and objects,
   the solutions' translation, the reference build's. Whatever they get, no
   output of theirs (report.txt, report.html, results.json, grade.json, ...)
   holds the classmate's line or a solution's.
4. The solutions, graded in the same folder afterwards, still get every
   correctness point: the tests work without the reference in their process.

Without --gpu the GPU is hidden (CUDA_VISIBLE_DEVICES=""): CPU mode, as CI
runs it. With --gpu, on a GPU host, the same on the GPU.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC, CUDALAB, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
GPU = "--gpu" in sys.argv[4:]
LAB, FILE = "03_tiling", "matmul_tiled.cu"
LABS = sorted(d for d in os.listdir(os.path.join(SRC, "labs"))
              if os.path.isfile(os.path.join(SRC, "labs", d, "lab.toml")))
MARK = "classmate-7f3a1c: Jane Roe's own tiling, personal data"


def grade(sub, out, course):
    env = dict(os.environ)
    if not GPU:
        env["CUDA_VISIBLE_DEVICES"] = ""
    r = subprocess.run([CUDALAB, "grade", sub, "--work-dir", WORK, "--course", course, "--out", out],
                       capture_output=True, text=True, env=env)
    print(r.stdout[-3000:] + r.stderr[-3000:])
    return r.returncode


def lab_of(out, lab_id):
    """The lab's record in out/grade.json; None (and why, printed) where there is none."""
    try:
        g = json.load(open(os.path.join(out, "grade.json")))
        return next(l for l in g["labs"] if l["id"] == lab_id)
    except (OSError, ValueError, StopIteration) as e:
        print(f"no grade of {lab_id} in {out}: {e!r}")
        return None


def solution_lines():
    """Per lab, the lines of its solution that the student release lacks (long enough to mean
    something): not in its skeleton, and not a function the public tests declare (a foil's
    signature, `void copy(const float* in, ...) {`, is the tests' `void copy(...);`)."""
    public = "".join(open(os.path.join(SRC, "labs", lab, f)).read()
                     for lab in LABS for f in os.listdir(os.path.join(SRC, "labs", lab)) if f.endswith(".cpp"))
    out = {}
    for lab in LABS:
        sdir, kdir = os.path.join(SRC, "solutions", lab), os.path.join(SRC, "labs", lab)
        if not os.path.isdir(sdir):
            continue
        for f in os.listdir(sdir):
            if not f.endswith(".cu"):
                continue
            skel = open(os.path.join(kdir, f)).read() if os.path.exists(os.path.join(kdir, f)) else ""
            lines = {l.strip() for l in open(os.path.join(sdir, f)).read().splitlines()}
            out[f"{lab}/{f}"] = sorted(l for l in lines if len(l) > 30 and l not in skel and not l.startswith("//")
                                       and l.rstrip("{ ") + ";" not in public)
    return out


def solution_kernels():
    """The solutions' kernels as namespace ref names them in an object (_ZN3ref19matmul_tiled_kernel...)."""
    names = set()
    for lab in LABS:
        sdir = os.path.join(SRC, "solutions", lab)
        for f in os.listdir(sdir) if os.path.isdir(sdir) else []:
            if f.endswith(".cu"):
                names |= set(re.findall(r"__global__\s+void\s+(\w+)", open(os.path.join(sdir, f)).read()))
    return {n: f"3ref{len(n)}{n}".encode() for n in names}


def files_under(root):
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                yield p


def course_part(path):
    """Whether a file of a slot's build folder is the course's part, not one the last submission
    built from its own files (labs/lib<lab>-student*, labs/cpu-<lab>-*, labs/<lab>-tests*:
    grader/pipeline/internal.h student_output): the classmate's own objects may hold their own
    file, which step 1 makes a copy of the solution."""
    name = os.path.relpath(path, os.path.join(WORK, "build")).split(os.sep)
    if len(name) < 2 or name[0] != "labs":
        return True
    return not any(name[1].startswith((f"lib{l}-student", f"cpu-{l}-", f"{l}-tests")) for l in LABS)


def holding(root, needles, only=lambda path: True):
    """The files under root (those `only` takes) that hold any of needles (bytes), with the first needle found."""
    found = []
    for p in filter(only, files_under(root)):
        try:
            data = open(p, "rb").read()
        except OSError:
            continue
        for n in needles:
            if n in data:
                found.append((p, n.decode(errors="replace")))
                break
    return found


def snooper(path):
    """A lab-03 file that embeds `path` (an .incbin: no include to list) and throws its bytes."""
    base = open(os.path.join(SRC, "solutions", LAB, FILE)).read()
    launcher = "void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {"
    assert launcher in base
    embed = (
        '#include <stdexcept>\n#include <string>\n'
        'extern "C" const char snoop_begin[], snoop_end[];\n'
        'asm(".section .rodata\\nsnoop_begin:\\n.incbin \\"' + path + '\\"\\nsnoop_end:\\n.byte 0\\n.previous\\n");\n')
    return embed + base.replace(launcher, launcher + "\n  throw std::runtime_error(std::string(snoop_begin, snoop_end));")


tmp = tempfile.mkdtemp(prefix="cudalab-isolation-")
try:
    course = os.path.join(tmp, "course.toml")
    with open(course, "w") as f:
        f.write(f'[course]\ntitle = "isolation"\nlabs = {json.dumps(LABS)}\n'
                '[grading]\nseed = 424242\ncheck_timeout_s = 60\n')

    # --- 1. the classmate -----------------------------------------------------
    classmate = os.path.join(tmp, "classmate")
    os.makedirs(classmate)
    sol = open(os.path.join(SRC, "solutions", LAB, FILE)).read()
    with open(os.path.join(classmate, FILE), "w") as f:
        f.write(f"// {MARK}\n" + sol)
    rc = grade(classmate, os.path.join(tmp, "out-classmate"), course)
    check(rc in (0, 1, 3), f"the classmate's submission is graded (exit {rc})")
    lab = lab_of(os.path.join(tmp, "out-classmate"), LAB)
    correct = [c for c in lab["checks"] if c["kind"] == "correctness"] if lab else []
    check(correct and all(c["verdict"] == "pass" for c in correct),
          "the classmate's correct lab 03 passes its correctness checks without the reference in its process")

    # --- 2. nothing of a solution where submissions are built ----------------
    build = os.path.join(WORK, "build")
    check(os.path.isdir(os.path.join(build, "labs")), f"the grading folder's slot is {build}")
    kernels = solution_kernels()
    check(len(kernels) >= 5, f"the solutions' kernels are known ({len(kernels)})")
    hits = holding(build, list(kernels.values()), course_part)
    check(not hits, "no file of the course's part of the slot's build folder holds a solution's kernel"
          + (f": {hits[:3]}" if hits else ""))
    lines = [l.encode() for ls in solution_lines().values() for l in ls]
    check(len(lines) > 20, f"the solutions' own lines are known ({len(lines)})")
    hits = holding(build, lines, course_part)
    check(not hits, "no file of the course's part of the slot's build folder holds a line of a solution"
          + (f": {hits[:3]}" if hits else ""))
    check(not [f for f in os.listdir(os.path.join(build, "labs")) if f.startswith("cpu-ref-")],
          "the slot holds no CPU-mode translation of a solution")
    ref_build = os.path.join(WORK, "reference", "build")
    check(os.path.isdir(ref_build), "the reference's own build is apart, in " + ref_build)

    # --- 3. submissions that read their build folder -------------------------
    targets = {
        "classmate's translation": os.path.join(build, "labs", f"cpu-{LAB}-{FILE}.cpp"),
        "classmate's library": os.path.join(build, "labs", f"lib{LAB}-student-cpu.a"),
        "classmate's GPU library": os.path.join(build, "labs", f"lib{LAB}-student.a"),
        "classmate's test binary": os.path.join(build, "labs", f"{LAB}-tests-cpu"),
        "the solutions' translation": os.path.join(build, "labs", f"cpu-ref-{LAB}-{LAB}-{FILE}.cpp"),
        "the reference build's translation": os.path.join(ref_build, "labs", f"cpu-ref-{LAB}-{LAB}-{FILE}.cpp"),
        "the reference build's binary": os.path.join(ref_build, "labs", f"{LAB}-tests-cpu"),
    }
    needles = [MARK.encode()] + lines
    for n, (what, path) in enumerate(targets.items()):
        sub = os.path.join(tmp, f"snoop{n}")
        os.makedirs(sub)
        with open(os.path.join(sub, FILE), "w") as f:
            f.write(snooper(path))
        out = os.path.join(tmp, f"out-snoop{n}")
        rc = grade(sub, out, course)
        check(rc in (0, 1, 3), f"a file that embeds {what} is graded (exit {rc})")
        lab = lab_of(out, LAB) or {"status": "no grade", "points": 0}
        hits = holding(out, needles) if os.path.isdir(out) else []
        check(not hits, f"nothing of the classmate or of a solution in the outputs of a file that embeds {what}"
              + (f" (found in {hits[0][0]})" if hits else "") + f"; lab 03: {lab['status']}, {lab['points']} points")

    # --- 4. the solutions in the same folder ---------------------------------
    sols = os.path.join(tmp, "solutions")
    for l in LABS:
        for f in os.listdir(os.path.join(SRC, "solutions", l)):
            os.makedirs(os.path.join(sols, l), exist_ok=True)
            shutil.copy(os.path.join(SRC, "solutions", l, f), os.path.join(sols, l, f))
    rc = grade(sols, os.path.join(tmp, "out-solutions"), course)
    for l in LABS:
        lab = lab_of(os.path.join(tmp, "out-solutions"), l) or {"status": "no grade", "checks": []}
        bad = [c["id"] for c in lab["checks"] if c["kind"] == "correctness" and c["verdict"] != "pass"]
        check(lab["status"] == "graded" and not bad,
              f"the solution of {l} passes every correctness check" + (f" (not: {bad})" if bad else ""))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
