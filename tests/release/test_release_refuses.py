#!/usr/bin/env python3
"""`cudalab release` (tools/release.py) refuses a skeleton that is its
solution, before it writes anything: the release's own leak scan cannot see
it (it looks for the lines a solution has and its skeleton lacks, and there
are none), so without this the release handed every student the solution.

On a small made-up course tree (one lab, no references to compile, so the
release itself takes a second): the same file in labs/ and solutions/, and
the same code laid out differently, are refused with the file named and an
existing --out left alone; once the skeleton has its TODO, the release is
written.

  test_release_refuses.py SOURCE_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC = sys.argv[1]
RELEASE = os.path.join(SRC, "tools", "release.py")

SOLUTION = """\
#include "cudalab/lab.cuh"
__global__ void copy_kernel(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
void copy(const float* in, float* out, int n) { copy_kernel<<<cudalab::ceil_div(n, 256), 256>>>(in, out, n); }
"""
SKELETON = """\
#include "cudalab/lab.cuh"
__global__ void copy_kernel(const float* in, float* out, int n) {
  // TODO(lab1): out[i] = in[i]
}
void copy(const float* in, float* out, int n) { CUDALAB_TODO("lab1: launch copy_kernel"); }
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def release(tree, out):
    r = subprocess.run([sys.executable, RELEASE, "--source", tree, "--out", out, "--no-gpu", "--force"],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, flush=True)
    return r.returncode, r.stdout + r.stderr


tmp = tempfile.mkdtemp(prefix="cudalab-release-refuses-")
try:
    tree, out = os.path.join(tmp, "course"), os.path.join(tmp, "release")
    write(os.path.join(tree, "course.toml"), '[course]\ntitle = "t"\n[grading]\nseed = 1\n')
    os.makedirs(os.path.join(tree, "tools"))
    shutil.copy(os.path.join(SRC, "tools", "reference.cu.in"), os.path.join(tree, "tools"))
    write(os.path.join(tree, "labs", "01_copy", "lab.toml"),
          '[lab]\ntitle = "Copy"\nstudent_files = ["copy.cu"]\ntests = ["test_copy.cpp"]\nlaunchers = ["copy"]\n')
    write(os.path.join(tree, "labs", "01_copy", "test_copy.cpp"), "// the checks\n")
    write(os.path.join(tree, "solutions", "01_copy", "copy.cu"), SOLUTION)
    # An earlier release in --out: a refusal must leave it as it was.
    write(os.path.join(out, "earlier.txt"), "an earlier release\n")

    write(os.path.join(tree, "labs", "01_copy", "copy.cu"), SOLUTION)
    rc, log = release(tree, out)
    check(rc != 0, f"a skeleton equal to its solution is refused (exit {rc})")
    check("labs/01_copy/copy.cu is its solution (solutions/01_copy/copy.cu, the same code)" in log,
          "the message names the skeleton and its solution")
    check("TODO(labN)" in log and "Nothing was written" in log, "it says what to do, and that nothing was written")
    check(os.listdir(out) == ["earlier.txt"], "--out is left as it was, even with --force")

    # The same code laid out differently (an editor's reformatting) is the solution still.
    write(os.path.join(tree, "labs", "01_copy", "copy.cu"),
          "\n" + SOLUTION.replace("  ", "    ").replace(";\n", ";   \n\n").replace(" = ", "  =  "))
    rc, log = release(tree, out)
    check(rc != 0 and "is its solution" in log, "the same code with other whitespace is refused too")

    write(os.path.join(tree, "labs", "01_copy", "copy.cu"), SKELETON)
    rc, log = release(tree, out)
    check(rc == 0, f"with the TODOs in, the release is written (exit {rc})")
    check(os.path.isfile(os.path.join(out, "labs", "01_copy", "copy.cu")) and
          not os.path.exists(os.path.join(out, "solutions")), "it holds the skeleton, no solutions/")
    readme = open(os.path.join(out, "README.md")).read() if os.path.isfile(os.path.join(out, "README.md")) else ""
    check("| `01_copy` | Copy |" in readme, "the students' README lists the lab, from the tree")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
