#!/usr/bin/env python3
"""The student release, end to end:

  1. `cudalab release --out WORK/release` (GPU references for one architecture
     only, to save time; CPU mode only where there is no nvcc);
  2. the release holds no solution: no solutions/, tests/, docs/, simt/tests/,
     and no line of a solution's work (the lines of solutions/<lab>/<file>
     that its skeleton labs/<lab>/<file> lacks) in any text file or in the
     `strings` of any binary; course.toml has no grading seed;
  3. committed to a fresh git repository and cloned, as a student gets it,
     `./cudalab test --cpu` of every lab in the clone fails on the skeletons
     with "not implemented yet" (no crash, no error) and, with the solutions
     copied into the clone's labs/, passes every correctness check. Where nvcc
     is, the same run builds the GPU test binaries too (the prebuilt GPU
     references link).

  check_release.py SOURCE_ROOT CUDALAB_EXE WORK_DIR [--archs 75] [--scan-only]
"""
import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)
    return ok


def run(argv, cwd=None, env=None, expect=0):
    print("$ " + " ".join(argv), flush=True)
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if expect is not None and p.returncode != expect:
        print(p.stdout[-6000:])
        sys.exit(f"FAIL: {' '.join(argv)} exited {p.returncode}, expected {expect}")
    return p


def release_module(src):
    """tools/release.py, whose leak scan `cudalab release` runs: the test holds it to the same rules."""
    spec = importlib.util.spec_from_file_location("release", os.path.join(src, "tools", "release.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def scan(src, rel):
    for d in ("solutions", "tests", "docs", "simt/tests", "grader/autograder", "tools/probes"):
        check(not os.path.exists(os.path.join(rel, d)), f"the release has {d}/")
    check(not os.path.exists(os.path.join(rel, "tools", "release.py")), "the release has tools/release.py")
    with open(os.path.join(rel, "course.toml"), "rb") as fh:
        course = tomllib.load(fh)
    check("seed" not in course.get("grading", {}), "the release's course.toml has the grading seed")
    needles, files, found = release_module(src).leak_scan(src, rel)
    check(len(needles) > 20, f"only {len(needles)} solution lines to look for: the scan would prove nothing")
    for path, lab, f, line in found[:20]:
        check(False, f"{path} holds a line of solutions/{lab}/{f}: {line}")
    check(len(found) <= 20, f"{len(found) - 20} more lines of solutions")
    print(f"leak scan: {len(needles)} solution lines, {files} files of the release: {len(found)} found", flush=True)
    libs = sorted(os.path.relpath(os.path.join(d, n), rel) for d, _, ns in os.walk(os.path.join(rel, "prebuilt"))
                  for n in ns if n.endswith(".a"))
    print("prebuilt: " + ", ".join(libs), flush=True)
    for lib in libs:
        syms = subprocess.run(["nm", "-C", "--defined-only", os.path.join(rel, lib)], capture_output=True,
                              text=True).stdout
        check(re.search(r" T ref::", syms) is not None, f"{lib} defines no ref:: function")
        sections = subprocess.run(["objdump", "-h", os.path.join(rel, lib)], capture_output=True, text=True).stdout
        check(".debug" not in sections, f"{lib} has debug sections")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("cudalab")
    ap.add_argument("work")
    ap.add_argument("--archs", default="75")
    ap.add_argument("--scan-only", action="store_true")
    a = ap.parse_args()
    src = os.path.realpath(a.source)
    work = os.path.realpath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    if os.path.isdir("/usr/local/cuda/bin"):
        env["PATH"] = "/usr/local/cuda/bin:" + env.get("PATH", "")
    have_nvcc = shutil.which("nvcc", path=env["PATH"]) is not None

    rel = os.path.join(work, "release")
    p = run([a.cudalab, "release", "--out", rel] + (["--archs", a.archs] if have_nvcc else ["--no-gpu"]), env=env)
    print(p.stdout, flush=True)
    scan(src, rel)
    if a.scan_only:
        return finish()

    # As a student gets it: a git repository, cloned.
    git = ["git", "-c", "user.name=cudalab", "-c", "user.email=cudalab@localhost", "-c", "init.defaultBranch=main"]
    run(git + ["init", "-q", rel])
    run(git + ["-C", rel, "add", "-A"])
    run(git + ["-C", rel, "commit", "-q", "-m", "course release"])
    clone = os.path.join(work, "clone")
    run(["git", "clone", "-q", rel, clone])
    build = os.path.join(work, "clone-build")
    # The build the ./cudalab script would configure, with one GPU architecture
    # (nothing runs on a GPU here; CI saves minutes).
    run(["meson", "setup", build, clone] + (["-Dgpu_arch=" + a.archs.split(",")[0]] if have_nvcc else []), env=env)
    env["CUDALAB_BUILD_DIR"] = build
    labs = sorted(d for d in os.listdir(os.path.join(clone, "labs"))
                  if os.path.isfile(os.path.join(clone, "labs", d, "lab.toml")))

    # The skeletons: every correctness check fails with "not implemented yet".
    p = run([os.path.join(clone, "cudalab"), "test", "--cpu"] + labs, cwd=clone, env=env, expect=None)
    print(p.stdout, flush=True)
    check(p.returncode == 1, f"skeletons: exit code {p.returncode}, expected 1 (checks failed)")
    out = p.stdout
    check("not implemented yet" in out, "skeletons: no 'not implemented yet'")
    for bad in ("CRASH", "ERROR", "TIMEOUT", "the build failed", "crash", "ended ("):
        check(bad not in out, f"skeletons: '{bad}' in the output")
    check(len(re.findall(r"\bPASS\b", out)) == 0, "skeletons: a check passed")
    # A failed check's own output only with --verbose (without it, only a
    # crash's, a timeout's or an error's).
    check("output:" not in out, "skeletons: a check's output shown without --verbose")
    p = run([os.path.join(clone, "cudalab"), "test", "--cpu", "--no-build", "--verbose", labs[0]], cwd=clone, env=env,
            expect=None)
    check(re.search(r"output:\n\s+\| .*\n", p.stdout) is not None, "skeletons: --verbose showed no check's output")

    # The solutions copied in: every correctness check passes.
    for lab in labs:
        sdir = os.path.join(src, "solutions", lab)
        for f in os.listdir(sdir) if os.path.isdir(sdir) else []:
            shutil.copy(os.path.join(sdir, f), os.path.join(clone, "labs", lab, f))
    p = run([os.path.join(clone, "cudalab"), "test", "--cpu"] + labs, cwd=clone, env=env, expect=None)
    print(p.stdout, flush=True)
    check(p.returncode == 0, f"solutions: exit code {p.returncode}, expected 0")
    check(re.search(r"\bFAIL\b", p.stdout) is None, "solutions: a check failed")
    check(len(re.findall(r"\bPASS\b", p.stdout)) >= 3 * len(labs), "solutions: fewer PASS than correctness checks")
    if "04_transpose" in labs:
        # The students' README offers --access-report: its counts come from
        # the confined check process and name the kernel's source lines.
        p = run([os.path.join(clone, "cudalab"), "test", "04_transpose", "--cpu", "--access-report", "--check",
                 "multiples"], cwd=clone, env=env, expect=None)
        print(p.stdout, flush=True)
        check("(no accesses recorded)" not in p.stdout, "access report: nothing recorded")
        check(re.search(r"transpose\.cu:\d+\s+transpose_kernel\s+shared load .* 0\.00 bank conflicts/request",
                        p.stdout), "access report: the padded tile's shared load, at its line, without conflicts")
    if have_nvcc:
        # `cudalab test` builds no GPU binary where no GPU is usable: build them here.
        subprocess.run(["ninja", "-C", build] + [f"labs/{lab}-tests" for lab in labs],
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        for lab in labs:
            check(os.path.isfile(os.path.join(build, "labs", lab + "-tests")),
                  f"the GPU test binary of {lab} did not build against the prebuilt references")
    return finish()


def finish():
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("release: OK")
    return 0


sys.exit(main())
