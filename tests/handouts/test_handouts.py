#!/usr/bin/env python3
"""The handouts hold together (suite unit, host-only):

  test_handouts.py SOURCE_ROOT
      every SVG in handouts/img/ is well-formed XML with an <svg> root and a
      size, every image a handout shows exists and every SVG is shown; every
      repository path a handout names in backticks exists; the primer's table
      of what to hand in is each lab.toml's student_files, lab for lab; and
      every path that the handouts, the labs' files and course.toml name is
      in the student release (tools/release.py's lists), or is said to be
      "in the course repository".

  test_handouts.py SOURCE_ROOT --run BINARY [--gpu]
      runs the primer's example (handouts/examples/primer_scale.cu, built by
      handouts/meson.build) and checks that it prints OK, and prints exactly
      the output handouts/00_cuda_primer.md shows, so neither can drift from
      the other; in CPU mode, that the names its gdb session prints
      (simt_threadIdx, simt_blockIdx) are symbols of the binary. --gpu: the
      nvcc build, skipped (77) without a visible GPU.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}svg"
PRIMER = os.path.join("handouts", "00_cuda_primer.md")
failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)
    return ok


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_images(root):
    handouts = sorted(glob.glob(os.path.join(root, "handouts", "*.md")))
    shown = set()
    for md in handouts:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", read(md)):
            path = os.path.normpath(os.path.join(os.path.dirname(md), target))
            shown.add(path)
            check(os.path.isfile(path), f"{os.path.relpath(md, root)} shows {target}, which does not exist")
    svgs = sorted(glob.glob(os.path.join(root, "handouts", "img", "*.svg")))
    check(len(svgs) >= 2, f"expected the handouts' SVGs in handouts/img/, found {len(svgs)}")
    for svg in svgs:
        rel = os.path.relpath(svg, root)
        try:
            top = ET.parse(svg).getroot()
        except ET.ParseError as e:
            check(False, f"{rel} is not well-formed XML: {e}")
            continue
        check(top.tag == SVG, f"{rel}: the root element is {top.tag}, not an SVG <svg>")
        check(all(top.get(a) for a in ("width", "height", "viewBox")),
              f"{rel}: <svg> needs width, height and viewBox (a browser shows it at its size)")
        check(os.path.normpath(svg) in shown, f"{rel} is shown by no handout")


def check_paths(root):
    # `labs/03_tiling/matmul_tiled.cu`, `handouts/examples/primer_scale.cu`: a
    # path a handout names must be there. Placeholders (LAB, NN_name, *) and
    # build outputs are not files of the tree.
    path = re.compile(r"`((?:handouts|labs|docs|harness|simt|course|tools)/[A-Za-z0-9_./-]+)`")
    for md in sorted(glob.glob(os.path.join(root, "handouts", "*.md"))):
        for p in set(path.findall(read(md))):
            if re.search(r"NN|LAB|\*", p):
                continue
            check(os.path.exists(os.path.join(root, p.rstrip("/"))),
                  f"{os.path.relpath(md, root)} names `{p}`, which does not exist")


def release_lists(root):
    """FILES, FOLDERS and EXCLUDED of tools/release.py: what the student release holds."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("release", os.path.join(root, "tools", "release.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.FILES, mod.FOLDERS, mod.EXCLUDED


# Files release.py writes itself rather than copies.
RELEASE_MADE = {"README.md", "course.toml", "prebuilt", ".github"}
TREE_PATH = re.compile(r"(?<![\w/.-])((?:docs|tests|solutions|calibration|tools|labs|handouts|harness|simt|grader"
                       r"|course)/[A-Za-z0-9_./*-]*)")
ELSEWHERE = "in the course repository"


def check_release_paths(root):
    """A student reads the handouts, the labs' files and course.toml in the release: a path they name
    that the release leaves out (docs/, tests/, solutions/, calibration/) must say where it is."""
    files, folders, excluded = release_lists(root)

    def shipped(p):
        p = p.rstrip("/.")
        if "*" in p:  # calibration/*.toml: the folder decides
            p = os.path.dirname(p.split("*")[0].rstrip("/")) or p.split("/")[0]
        top = p.split("/")[0]
        if p in files or top in RELEASE_MADE:
            return True
        # A path under a shipped folder that is not in the tree is a build output (a ninja target).
        return top in folders and not any(p == e or p.startswith(e + "/") for e in excluded)

    texts = sorted(glob.glob(os.path.join(root, "handouts", "*.md")))
    texts += sorted(f for f in glob.glob(os.path.join(root, "labs", "*", "*")) if os.path.isfile(f))
    texts.append(os.path.join(root, "course.toml"))
    for path in texts:
        rel = os.path.relpath(path, root)
        # One line of prose per paragraph: wrapped lines and comment markers joined.
        text = re.sub(r"\n\s*(#|//)?\s*", " ", read(path))
        for m in TREE_PATH.finditer(text):
            p = m.group(1)
            if re.search(r"NN|LAB|<", p) or shipped(p):
                continue
            after = text[m.end():m.end() + 80].split(")")[0]
            check(ELSEWHERE in after,
                  f"{rel} names {p}, which the student release leaves out (tools/release.py): say where it is "
                  f"(\"{p} {ELSEWHERE}\") or name what the release has")


def check_hand_in(root):
    expected = {}
    for toml in sorted(glob.glob(os.path.join(root, "labs", "*", "lab.toml"))):
        lab = os.path.basename(os.path.dirname(toml))
        with open(toml, "rb") as f:
            files = tomllib.load(f)["lab"]["student_files"]
        expected[lab] = [f"labs/{lab}/{f}" for f in files]
    table = {}
    for lab, cell in re.findall(r"^\| `(\d\d_[a-z0-9_]+)` \| (.*) \|$", read(os.path.join(root, PRIMER)), re.M):
        table[lab] = re.findall(r"`([^`]+)`", cell)
    check(table == expected, f"{PRIMER}'s table of what to hand in says {table}, the labs' lab.toml files "
          f"say {expected}")


def shown_output(root):
    """The block the primer shows right after the command that runs the example."""
    text = read(os.path.join(root, PRIMER))
    m = re.search(r"```sh\nninja -C build handouts/primer_scale-cpu && build/handouts/primer_scale-cpu\n```\n\n"
                  r"It prints:\n\n```\n(.*?)```", text, re.S)
    return m.group(1) if m else None


def run_example(root, binary, gpu):
    if gpu:
        try:
            smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
            visible = smi.returncode == 0 and "GPU" in smi.stdout
        except (OSError, subprocess.SubprocessError):
            visible = False
        if not visible:
            print("no GPU visible: the nvcc build of the primer's example was built, not run")
            sys.exit(77)
    p = subprocess.run([binary], capture_output=True, text=True, timeout=120)
    print(p.stdout + p.stderr)
    check(p.returncode == 0, f"{binary} exited {p.returncode}, expected 0")
    check(p.stdout.rstrip().endswith("\nOK"), f"{binary} did not end with OK")
    want = shown_output(root)
    if check(want is not None, f"{PRIMER} shows no output after the command that runs the example"):
        check(p.stdout == want, f"{binary} printed\n{p.stdout}\nbut {PRIMER} shows\n{want}")
    if not gpu:
        # The primer's gdb session names CPU mode's built-ins by their symbols.
        text = read(os.path.join(root, PRIMER))
        symbols = subprocess.run(["nm", binary], capture_output=True, text=True).stdout.split()
        for name in ("simt_threadIdx", "simt_blockIdx"):
            check(name in text, f"{PRIMER} no longer shows gdb the name {name}")
            check(name in symbols, f"{PRIMER} tells gdb to print {name}, which {binary} does not define")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--run", metavar="BINARY")
    ap.add_argument("--gpu", action="store_true")
    a = ap.parse_args()
    if a.run:
        run_example(a.root, a.run, a.gpu)
    else:
        check_images(a.root)
        check_paths(a.root)
        check_hand_in(a.root)
        check_release_paths(a.root)
    if failures:
        sys.exit(f"{len(failures)} failure(s)")
    print("OK")


main()
