#!/usr/bin/env python3
"""Writes the student release of the course: `cudalab release --out DIR`.

The release is the repository without anything a solution can be read or
copied from: the skeletons, the labs' tests and manifests, the helpers the
tests share (course/include), the harness, simt (CPU mode), the grader's
sources (the ./cudalab program), the handouts, the build files, a students'
README and a public course.toml without the grading seed. The references the
tests compare against travel as prebuilt static libraries, one per lab whose
solution another lab's `references` names:

  prebuilt/<lab>/libref-<lab>.a      GPU: SASS for [release] cuda_archs only
                                     (PTX too where [release] ptx = true)
  prebuilt/<lab>/libref-<lab>-cpu.a  CPU mode: simt's translation, x86-64
  prebuilt/cuda_archs.txt            what the GPU libraries hold, for the build
                                     (compiled into each lab's info: the test
                                     binaries name it on a GPU it lacks)

Both are compiled from tools/reference.cu.in (namespace ref, the names the
tests link against) without debug or line information, and stripped of local
symbols. labs/meson.build links them where solutions/ is absent.

  release.py --source ROOT --out DIR [--archs 75,80] [--course FILE] [--no-gpu] [--force]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("release.py needs Python 3.11 or newer (tomllib)")

# What a student gets, relative to the source root: files, and folders copied
# whole (minus the exclusions below). Nothing else is copied: solutions/,
# tests/ (variants and gallery are complete solutions), docs/ (calibration
# quotes solution code), simt/tests/ (a tiled matmul), tools/probes/,
# grader/autograder/ (the instructor's grading setup), .ci/.
FILES = ["cudalab", "meson.build", "meson_options.txt", ".gitignore", ".clang-format",
         "tools/labinfo.py", "tools/cuda_arch.py", "tools/lab_info.cpp.in", "tools/reference.cu.in",
         "tools/extract.py", "tools/format.py", "tools/progress.py"]
FOLDERS = ["labs", "course", "harness", "simt", "grader", "handouts"]
EXCLUDED = {"simt/tests", "grader/autograder"}
# Files that go elsewhere in the release: the GitHub Classroom workflow, kept
# out of .github/ here so that it does not run on the instructor's repository.
MOVED = {"tools/classroom.yml": ".github/workflows/classroom.yml"}
JUNK = re.compile(r"(^|/)(__pycache__|\.git|.*\.pyc|.*\.o|.*~|\.#.*)$")
# Build folders are folders: a source file may be named build.cpp.
JUNK_DIR = re.compile(r"(^|/)(__pycache__|\.git|build[^/]*)$")

DEFAULT_ARCHS = [75, 80, 86, 89, 90]


def fail(msg):
    sys.exit(f"cudalab release: {msg}")


def run(argv, cwd=None):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def lab_field(toml_path, field):
    with open(toml_path, "rb") as f:
        return tomllib.load(f).get("lab", {}).get(field, [])


def read_release_settings(course_path, archs_arg):
    with open(course_path, "rb") as f:
        course = tomllib.load(f)
    rel = course.get("release", {})
    archs = rel.get("cuda_archs", DEFAULT_ARCHS)
    ptx = rel.get("ptx", False)
    if archs_arg:
        archs = [a for a in re.split(r"[;, ]+", archs_arg) if a]
    try:
        archs = sorted({int(a) for a in archs})
    except (TypeError, ValueError):
        fail(f"{course_path}: [release] cuda_archs must be a list of architectures like [75, 80, 90]")
    if not archs or any(a < 75 for a in archs):
        fail(f"{course_path}: [release] cuda_archs: nvcc 13 builds sm_75 and newer (got {archs})")
    if not isinstance(ptx, bool):
        fail(f"{course_path}: [release] ptx must be true or false")
    return archs, ptx


def copy_tree(src_root, out):
    copied = []
    for rel in FILES:
        src = os.path.join(src_root, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(out, rel)) or out, exist_ok=True)
            shutil.copy2(src, os.path.join(out, rel))
            copied.append(rel)
    for rel, dest in MOVED.items():
        src = os.path.join(src_root, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(out, dest)), exist_ok=True)
            shutil.copy2(src, os.path.join(out, dest))
            copied.append(dest)
    for top in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(src_root, top)):
            reldir = os.path.relpath(dirpath, src_root)
            dirnames[:] = sorted(d for d in dirnames
                                 if os.path.join(reldir, d) not in EXCLUDED and not JUNK_DIR.search(d))
            for name in sorted(filenames):
                if JUNK.search(name):
                    continue
                rel = os.path.join(reldir, name)
                os.makedirs(os.path.join(out, reldir), exist_ok=True)
                shutil.copy2(os.path.join(src_root, rel), os.path.join(out, rel))
                copied.append(rel)
    return copied


def public_course(text):
    """course.toml without the grading seed (the line and the comment above it)."""
    out, section, comments = [], None, []
    for line in text.splitlines(keepends=True):
        m = re.match(r"\s*\[([^\]]+)\]", line)
        if m:
            section = m.group(1).strip()
        if line.lstrip().startswith("#"):
            comments.append(line)
            continue
        if section == "grading" and re.match(r"\s*seed\s*=", line):
            comments = []  # the seed's own comment goes with it
            continue
        out += comments + [line]
        comments = []
    out += comments
    text = "".join(out)
    text = text.replace(
        "# Instructors: keep your own copy outside the student release (--course FILE)\n"
        "# so that the grading seed stays private.\n",
        "# The student release's copy: the grading seed is the course staff's.\n")
    doc = tomllib.loads(text)
    if "seed" in doc.get("grading", {}):
        fail("could not remove the grading seed from course.toml")
    return text


STUDENT_README = """\
# {title}: the labs

Graded labs on the CUDA memory hierarchy. Each lab is a folder in `labs/` with a
file to complete (the `TODO(labN)` items), its checks and its `lab.toml`; the
handout for each is in `handouts/`. New to CUDA? Start with
`handouts/00_cuda_primer.md`: kernels and their launch, threads and blocks, shared
memory and `__syncthreads()`, and how to test, debug and hand in a lab.

{labs}

```sh
./cudalab test 03_tiling               # build lab 3 and run its checks
./cudalab test 03_tiling --check ragged   # one check; --seed N, --verbose, --sanitize
./cudalab test                         # every lab
./cudalab doctor                       # what this machine has (GPU, nvcc, ...)
```

On first use `./cudalab` checks what the build needs (Debian 12 or Ubuntu with the
CUDA toolkit; as root it installs what is missing with apt-get, otherwise it prints
the `apt-get install` line), configures `build/` and builds. Each check prints PASS or
FAIL with what went wrong and where. Until you fill in a lab's launcher, its checks fail
with `not implemented yet`: that is the skeleton, not a crash.

No GPU? `./cudalab test` then runs the correctness checks in **CPU mode** (`--cpu` asks
for it): your kernels run on simulated GPU threads, with the same checks and messages,
and you can debug them with gdb and printf. Speed checks need a GPU. `--access-report`
counts the memory sectors and bank conflicts per line of your kernels. What CPU mode
models and what it does not: `handouts/cpu_mode.md`.

The reference solutions your results are compared with come prebuilt in `prebuilt/`
(GPU code for {archs}; CPU mode for x86-64 Linux). On a GPU of another architecture
the checks say so; use `--cpu` there and ask the course staff.

Hand in the files each `lab.toml` lists under `student_files`; everything else comes
from the course when you are graded. If your course hands the labs out through GitHub
Classroom, every push runs `.github/workflows/classroom.yml`: GitHub's machines have no
GPU, so it grades the correctness checks in CPU mode and shows their points in the
Actions tab; the speed checks count only in the course's own grade, on its GPU.
"""


def lab_index(src, labs):
    """The students' table of the labs: folder, title, handout (from the tree, so a new lab is listed)."""
    rows = ["| lab | title | handout |", "|---|---|---|"]
    for lab in labs:
        with open(os.path.join(src, "labs", lab, "lab.toml"), "rb") as f:
            title = tomllib.load(f).get("lab", {}).get("title", "")
        handout = f"handouts/{lab}.md"
        rows.append(f"| `{lab}` | {title} | " + (f"`{handout}`" if os.path.isfile(os.path.join(src, handout)) else "") +
                    " |")
    return "\n".join(rows)


def normalized_lines(path):
    with open(path, errors="replace") as f:
        return [" ".join(line.split()) for line in f if line.strip()]


# The leak scan: no line of a solution's work in any file of the release.
# Shorter solution lines (`__syncthreads();`, `#pragma unroll`, `float acc = 0.0f;`)
# are idioms that the harness, simt and the handouts use too, not a leak.
MIN_LINE = 18
# Lines of a solution that the course gives away on purpose, with where and why.
# A line a solution shares with the course's own example programs
# (handouts/examples/) or a skeleton is public already and needs no entry here.
ALLOWED = {
    "int device = 0, sms = 0;": "a CUDA runtime idiom (harness/src/timing_kernels.cu has it too)",
    "if (row >= M || col >= N) return;": "handouts/02_naive_matmul.md gives the bounds check as a hint",
    # The global index, CUDA's first idiom: handouts/01_coalescing.md and 02_naive_matmul.md give
    # it (without `const int`), and the primer (handouts/00_cuda_primer.md) and its example teach it.
    "const int i = blockIdx.x * blockDim.x + threadIdx.x;": "the primer's global index in one dimension",
    "const int col = blockIdx.x * blockDim.x + threadIdx.x;": "the primer's global index in two dimensions",
    "const int row = blockIdx.y * blockDim.y + threadIdx.y;": "the primer's global index in two dimensions",
}


def norm(line):
    return " ".join(line.split())


def solution_lines(src):
    """(lab, file, line) for each non-trivial line a solution has that no public code has: not its
    skeleton's (labs/), not the course's example programs' (handouts/examples/), not ALLOWED."""
    public = set()  # what students have anyway, by design
    for top in ("labs", os.path.join("handouts", "examples")):
        for dirpath, _, names in os.walk(os.path.join(src, top)):
            for name in names:
                if name.endswith((".cu", ".cuh", ".h", ".cpp")):
                    with open(os.path.join(dirpath, name), errors="replace") as fh:
                        public |= {norm(l) for l in fh}
    out = []
    for lab in sorted(os.listdir(os.path.join(src, "solutions"))):
        sdir = os.path.join(src, "solutions", lab)
        for f in sorted(os.listdir(sdir)):
            with open(os.path.join(sdir, f), errors="replace") as fh:
                for l in fh:
                    n = norm(l)
                    if len(n) < MIN_LINE or n in public or n in ALLOWED or not re.search(r"[A-Za-z0-9]", n):
                        continue
                    out.append((lab, f, n))
    return out


def release_texts(root):
    """(path, normalized text) of every file in the release: text as is, binaries through strings."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                data = fh.read()
            if b"\0" in data:
                text = subprocess.run(["strings", "-a", "-n", "6", path], capture_output=True,
                                      text=True).stdout
            else:
                text = data.decode("utf-8", errors="replace")
            yield os.path.relpath(path, root), "\n".join(norm(l) for l in text.splitlines())


def leak_scan(src, out):
    """(needles, files, found): the solution lines looked for, the release's files read, and each
    (path in the release, lab, solution file, line) found."""
    needles = solution_lines(src)
    found, files = [], 0
    for path, text in release_texts(out):
        files += 1
        found += [(path, lab, f, line) for lab, f, line in needles if line in text]
    return needles, files, found


def skeletons_that_are_solutions(src, labs):
    """The student files of labs/ whose solution in solutions/ is the same code (the same lines,
    whitespace aside): released, they would hand every student the solution."""
    same = []
    for lab in labs:
        for f in lab_field(os.path.join(src, "labs", lab, "lab.toml"), "student_files"):
            skeleton, solution = os.path.join(src, "labs", lab, f), os.path.join(src, "solutions", lab, f)
            if os.path.isfile(skeleton) and os.path.isfile(solution) and \
                    normalized_lines(skeleton) == normalized_lines(solution):
                same.append((f"labs/{lab}/{f}", f"solutions/{lab}/{f}", lab))
    return same


def compile_references(src_root, out, labs, archs, ptx, with_gpu, nvcc, cxx, work):
    """prebuilt/<lab>/libref-<lab>[-cpu].a for every lab some lab references."""
    template = os.path.join(src_root, "tools", "reference.cu.in")
    with open(template) as f:
        template_text = f.read()
    referenced = []
    for lab in labs:
        for r in lab_field(os.path.join(src_root, "labs", lab, "lab.toml"), "references"):
            if r not in referenced:
                referenced.append(r)
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    if ptx:
        gencode.append(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")
    inc = ["-I" + os.path.join(src_root, "harness", "include"),
           "-I" + os.path.join(src_root, "course", "include")]
    # What labs/meson.build passes for a reference, less -lineinfo (GPU) and
    # -g (CPU mode): no source lines or paths in the objects.
    common = ["-O3", "-std=c++17", "-D_FILE_OFFSET_BITS=64"]
    cpu_args = common + ["-fPIC", "-pthread", "-DCUDALAB_CPU_MODE=1", "-w",
                         "-I" + os.path.join(src_root, "simt", "include")] + inc
    gpu_args = common + ["-Xcompiler=-fPIC", "-Xcompiler=-pthread", "-w"] + gencode + inc
    built = []
    for r in referenced:
        files = lab_field(os.path.join(src_root, "labs", r, "lab.toml"), "student_files")
        gpu_objs, cpu_objs = [], []
        for f in files:
            src = os.path.join(src_root, "solutions", r, f)
            if not os.path.isfile(src):
                fail(f"labs/{r}/lab.toml: the reference solutions/{r}/{f} does not exist")
            # A neutral path: __FILE__ (CPU mode's launch sites) names
            # reference/<lab>/<file>, not the instructor's tree.
            rel = os.path.join("reference", r, f)
            os.makedirs(os.path.join(work, "reference", r), exist_ok=True)
            shutil.copy(src, os.path.join(work, rel))
            stem = f"{r}-{os.path.splitext(f)[0]}"
            if with_gpu:
                wrapped = f"ref-{stem}.cu"
                with open(os.path.join(work, wrapped), "w") as w:
                    w.write(template_text.replace("@SOURCE@", rel))
                obj = os.path.join(work, f"ref-{stem}.o")
                run([nvcc] + gpu_args + ["-c", wrapped, "-o", obj], cwd=work)
                gpu_objs.append(obj)
            cpp = f"cpu-ref-{stem}.cpp"
            run([sys.executable, os.path.join(src_root, "simt", "tools", "simt_translate.py"), rel, "-o", cpp,
                 "--wrap", template], cwd=work)
            obj = os.path.join(work, f"cpu-ref-{stem}.o")
            run([cxx] + cpu_args + ["-c", cpp, "-o", obj], cwd=work)
            cpu_objs.append(obj)
        dest = os.path.join(out, "prebuilt", r)
        os.makedirs(dest, exist_ok=True)
        for objs, lib in ((gpu_objs, f"libref-{r}.a"), (cpu_objs, f"libref-{r}-cpu.a")):
            if not objs:
                continue
            # No debug sections, no local symbols: the global ref:: names stay,
            # which is what the tests link against.
            run(["strip", "--strip-debug", "--discard-all", "-R", ".comment"] + objs)
            path = os.path.join(dest, lib)
            run(["ar", "rcsD", path] + objs)
            built.append(os.path.relpath(path, out))
    return referenced, built


def tool_version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()
        return out[-1] if argv[0].endswith("nvcc") else out[0]
    except (OSError, IndexError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description="Write the student release of the course")
    ap.add_argument("--source", required=True, help="the instructor's tree (with solutions/)")
    ap.add_argument("--out", required=True, help="the folder to write (must not exist, or be empty)")
    ap.add_argument("--course", help="the course file (default SOURCE/course.toml)")
    ap.add_argument("--archs", help="override [release] cuda_archs, e.g. 75 or 75,90")
    ap.add_argument("--no-gpu", action="store_true", help="CPU-mode references only (no nvcc needed)")
    ap.add_argument("--force", action="store_true", help="replace OUT if it exists")
    a = ap.parse_args()

    src = os.path.realpath(a.source)
    out = os.path.realpath(a.out)
    course = a.course or os.path.join(src, "course.toml")
    if not os.path.isdir(os.path.join(src, "solutions")):
        fail(f"{src} has no solutions/: a release is made from the instructor's tree, not from a release")
    if out == src or out.startswith(src + os.sep) and not os.path.relpath(out, src).startswith(("build", "release")):
        fail(f"--out {a.out}: write the release outside the course tree (or under build*/ or release*/)")
    labs = sorted(d for d in os.listdir(os.path.join(src, "labs"))
                  if os.path.isfile(os.path.join(src, "labs", d, "lab.toml")))
    # Before anything is written: a skeleton that is its solution (a lab
    # written in labs/ and copied to solutions/, the TODOs never put in).
    if same := skeletons_that_are_solutions(src, labs):
        fail("".join(f"{skel} is its solution ({sol}, the same code): the release would give it to every "
                     f"student.\n" for skel, sol, _ in same) +
             f"Write the skeleton first: the solution with the student's work replaced by TODO(labN) comments "
             f"and each launcher ending in CUDALAB_TODO (docs/new-lab.md). Nothing was written.")
    if os.path.exists(out) and os.listdir(out):
        if not a.force:
            fail(f"--out {a.out} exists and is not empty (--force replaces it)")
        shutil.rmtree(out)
    archs, ptx = read_release_settings(course, a.archs)
    nvcc = None
    if not a.no_gpu:
        nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK)
                                        else None)
        if not nvcc:
            fail("nvcc not found: the GPU references need it (--no-gpu writes a CPU-mode-only release)")
    cxx = os.environ.get("CXX") or "c++"

    os.makedirs(out, exist_ok=True)
    copied = copy_tree(src, out)
    with tempfile.TemporaryDirectory(prefix="cudalab-release-") as work:
        referenced, built = compile_references(src, out, labs, archs, ptx, nvcc is not None, nvcc, cxx, work)

    with open(course) as f:
        course_text = f.read()
    with open(os.path.join(out, "course.toml"), "w") as f:
        f.write(public_course(course_text))
    title = tomllib.loads(course_text).get("course", {}).get("title", "cudalab")
    arch_words = ", ".join(f"sm_{a}" for a in archs) + (f" (and PTX for newer GPUs)" if ptx else "")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(STUDENT_README.format(title=title, archs=arch_words if nvcc else "no GPU: CPU mode only",
                                      labs=lab_index(src, labs)))
    # For the build (labs/meson.build): what the GPU libraries hold, compiled
    # into each lab's info so that the test binaries can name it.
    codes = [f"sm_{a}" for a in archs] + ([f"compute_{archs[-1]}"] if ptx else [])
    os.makedirs(os.path.join(out, "prebuilt"), exist_ok=True)  # there even where no lab has references
    with open(os.path.join(out, "prebuilt", "cuda_archs.txt"), "w") as f:
        f.write(",".join(codes) + "\n" if nvcc else "\n")
    with open(os.path.join(out, "prebuilt", "README.md"), "w") as f:
        f.write("# Prebuilt references\n\n"
                "The course's reference solutions, compiled: the labs' checks compare your results with\n"
                "them (and time your kernels against them). Written by `cudalab release`; not to be edited.\n\n"
                f"- GPU: {', '.join(codes) if nvcc else 'none (a CPU-mode-only release)'}"
                f" (nvcc: {tool_version([nvcc, '--version']) if nvcc else '-'})\n"
                f"- CPU mode: x86-64 Linux ({tool_version([cxx, '--version'])})\n\n"
                "A CUDA toolkit at least as new as the one above is needed to link the GPU ones.\n")

    # Last: no line of a solution's work anywhere in what was written.
    needles, files, found = leak_scan(src, out)
    if found:
        fail("".join(f"{path} holds a line of solutions/{lab}/{f}: {line}\n" for path, lab, f, line in found[:20]) +
             f"The release in {out} would give that to every student. Where it is the solution's work, take it "
             f"out of that file. Where it is boilerplate the course gives away anyway, put it in the lab's "
             f"skeleton or the course's examples (handouts/examples/), or add it with the reason to ALLOWED in "
             f"tools/release.py.")
    print(f"cudalab release: wrote {out}")
    print(f"  {len(copied) + 2} source files (labs: {', '.join(labs)}); no solutions/, tests/, docs/")
    print(f"  prebuilt references for {', '.join(referenced)}: "
          f"GPU {', '.join(codes) if nvcc else 'none'}; CPU mode x86-64")
    for b in built:
        print(f"    {b} ({os.path.getsize(os.path.join(out, b)) // 1024} KiB)")
    print(f"  course.toml without the grading seed; README.md for students")
    print(f"  leak scan: {len(needles)} lines of the solutions' work, {files} files: none found")


if __name__ == "__main__":  # tools/bundle.py imports what it shares (what is junk)
    main()
