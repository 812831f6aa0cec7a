#!/usr/bin/env python3
"""`cudalab new-lab` (tools/new_lab.py) on a copy of the tree's lab folders:
a good name writes every file of a lab, consistent with each other (each
[[check]] of lab.toml has its TEST_CASE, the skeleton is not its solution, the
variants name the lab's checks); an existing lab, a number taken, a malformed
name or title is refused and writes nothing. A second or two: the lab it
writes is built and run by `cudalab test` elsewhere (docs/new-lab.md).

  test_new_lab.py SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC = sys.argv[1]


def snapshot(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def new_lab(tree, *args):
    r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "new_lab.py"), "--source", tree, *args],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, flush=True)
    return r.returncode, r.stdout + r.stderr


tmp = tempfile.mkdtemp(prefix="cudalab-new-lab-")
try:
    tree = os.path.join(tmp, "course")
    for d in ("labs", "solutions", "handouts"):
        shutil.copytree(os.path.join(SRC, d), os.path.join(tree, d))
    shutil.copytree(os.path.join(SRC, "tools", "lab_template"), os.path.join(tree, "tools", "lab_template"))
    # The causes' titles the handout's table of diagnoses is made with.
    os.makedirs(os.path.join(tree, "harness", "src"))
    shutil.copy(os.path.join(SRC, "harness", "src", "vocabulary.cpp"), os.path.join(tree, "harness", "src"))
    shutil.copy(os.path.join(SRC, "course.toml"), tree)
    shutil.copy(os.path.join(SRC, ".clang-format"), tree)
    existing = sorted(d for d in os.listdir(os.path.join(tree, "labs"))
                      if os.path.isfile(os.path.join(tree, "labs", d, "lab.toml")))
    taken = existing[0]
    free = next(f"{n:02d}" for n in range(1, 100) if not any(l.startswith(f"{n:02d}_") for l in existing))

    before = snapshot(tree)
    for args, words in ((["5_x", "X"], "is not a lab name"),
                        ([f"{free}_Bad", "X"], "is not a lab name"),
                        ([f"{free}_9lives", "X"], "is not a lab name"),
                        ([f"00_zero", "X"], "start at 01"),
                        ([taken, "X"], "exists already"),
                        ([f"{taken[:2]}_other", "X"], f"is taken by labs/{taken}"),
                        ([f"{free}_quote", 'a "b"'], "the title")):
        rc, log = new_lab(tree, *args)
        check(rc == 2 and words in log, f"new-lab {' '.join(args)} is refused: {words}")
    check(snapshot(tree) == before, "and nothing was written")

    lab = f"{free}_prefix_sum"
    rc, log = new_lab(tree, lab, "Prefix sums")
    check(rc == 0, f"new-lab {lab} succeeds")
    written = sorted(set(snapshot(tree)) - set(before))
    want = sorted([f"labs/{lab}/lab.toml", f"labs/{lab}/prefix_sum.cu", f"labs/{lab}/test_prefix_sum.cpp",
                   f"solutions/{lab}/prefix_sum.cu", f"handouts/{lab}.md",
                   f"tests/variants/{lab}/solution/expect.toml", f"tests/variants/{lab}/skeleton/expect.toml"])
    check(written == want, f"it writes the lab's folders and nothing else: {written}")
    with open(os.path.join(tree, "labs", lab, "lab.toml"), "rb") as f:
        manifest = tomllib.load(f)
    check(manifest["lab"]["title"] == "Prefix sums" and manifest["lab"]["references"] == [lab]
          and manifest["lab"]["student_files"] == ["prefix_sum.cu"], "lab.toml names the lab's files and title")
    check(sum(c["points"] for c in manifest["check"]) == 100, "its checks are worth 100 points, as every lab's")
    test = open(os.path.join(tree, "labs", lab, "test_prefix_sum.cpp")).read()
    cases = re.findall(r'TEST_CASE\("([^"]+)"\)', test)
    check(sorted(cases) == sorted(c["name"] for c in manifest["check"]),
          "each [[check]] has its TEST_CASE, by name")
    skeleton = open(os.path.join(tree, "labs", lab, "prefix_sum.cu")).read()
    solution = open(os.path.join(tree, "solutions", lab, "prefix_sum.cu")).read()
    check(f'CUDALAB_TODO("lab{int(free)}:' in skeleton and f"TODO(lab{int(free)})" in skeleton
          and skeleton != solution, "the skeleton has its TODO(labN) and CUDALAB_TODO, the solution not")
    ids = {c["id"] for c in manifest["check"]}
    for v in ("solution", "skeleton"):
        with open(os.path.join(tree, "tests", "variants", lab, v, "expect.toml"), "rb") as f:
            check(set(tomllib.load(f)["expect"]) == ids, f"the {v} variant expects every check of the lab")
    check(not re.search(r"@[A-Z]+@", "".join(open(os.path.join(tree, w)).read() for w in written)),
          "no template placeholder is left")
    rc, log = new_lab(tree, lab, "Again")
    check(rc == 2 and "exists already" in log, "the same name again is refused")

    # A scaffold passes the framework's own tests of labs and handouts as
    # written, on a copy of the whole tree: the primer's table of what to hand
    # in and the handout's table of diagnoses are made from the manifests by
    # new-lab, and the template names what the student release leaves out as
    # "in the course repository".
    whole = os.path.join(tmp, "whole")
    listed = subprocess.run(["git", "-C", SRC, "ls-files", "-z"], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        for rel in filter(None, listed.stdout.split("\0")):
            if os.path.isfile(os.path.join(SRC, rel)):
                os.makedirs(os.path.dirname(os.path.join(whole, rel)), exist_ok=True)
                shutil.copy2(os.path.join(SRC, rel), os.path.join(whole, rel))
        primer = os.path.join(whole, "handouts", "00_cuda_primer.md")
        rc, log = new_lab(whole, lab, "Prefix sums")
        check(rc == 0 and f"`labs/{lab}/prefix_sum.cu`" in open(primer).read(),
              "in the whole tree too, and the primer's table of what to hand in lists its file")
        for argv in (["tests/handouts/test_handouts.py", whole], ["tests/new_lab/test_labs_consistent.py", whole],
                     ["tools/cause_tables.py", whole, "--check"]):
            r = subprocess.run([sys.executable, os.path.join(SRC, argv[0])] + argv[1:], capture_output=True,
                               text=True)
            tail = (r.stdout + r.stderr).strip().splitlines()[-12:]
            check(r.returncode == 0, f"with it in, {argv[0]} passes: " + " / ".join(tail))
        # `./cudalab check-lab LAB --no-build` on it: passes as scaffolded; a
        # solution line pasted into the handout, then a skeleton that is its
        # solution, each fail the release step by name.
        def check_lab():
            r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "check_lab.py"), "--source", whole,
                                "--no-build", lab], capture_output=True, text=True)
            print(r.stdout + r.stderr, flush=True)
            return r.returncode, r.stdout + r.stderr
        rc, log = check_lab()
        check(rc == 0 and "3 of 3 steps passed" in log, "check-lab --no-build passes the scaffold")
        sys.path.insert(0, os.path.join(SRC, "tools"))
        import release
        needle = next((line for l, f, line in release.solution_lines(whole) if l == lab), None)
        check(needle is not None, "the scaffold's solution has a line no public code has")
        handout = os.path.join(whole, "handouts", f"{lab}.md")
        text = open(handout).read()
        with open(handout, "a") as f:
            f.write(f"\n```cuda\n{needle}\n```\n")
        rc, log = check_lab()
        check(rc == 1 and f"handouts/{lab}.md holds a line of solutions/{lab}/prefix_sum.cu" in log,
              "check-lab names a solution line pasted into the handout")
        with open(handout, "w") as f:
            f.write(text)
        shutil.copy(os.path.join(whole, "solutions", lab, "prefix_sum.cu"),
                    os.path.join(whole, "labs", lab, "prefix_sum.cu"))
        rc, log = check_lab()
        check(rc == 1 and f"labs/{lab}/prefix_sum.cu is its solution" in log,
              "check-lab names a skeleton that is its solution")
    else:
        print("not a git checkout: the whole-tree part is skipped")

    # ./cudalab new-lab runs the scaffolder without configuring or building anything.
    build = os.path.join(tmp, "no-build")
    r = subprocess.run([os.path.join(SRC, "cudalab"), "new-lab", "--help"], capture_output=True, text=True,
                       env=dict(os.environ, CUDALAB_BUILD_DIR=build), timeout=60)
    check(r.returncode == 0 and "NN_name" in r.stdout and not os.path.exists(build),
          f"./cudalab new-lab needs no build folder: exit {r.returncode}, {r.stdout[-200:]}{r.stderr[-200:]}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
