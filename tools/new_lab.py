#!/usr/bin/env python3
"""Lays out a new lab's files from tools/lab_template/: `cudalab new-lab NN_name "Title"`.

  new_lab.py --source ROOT NN_name "Title"

writes, ready to fill (docs/new-lab.md is the guide):

  labs/NN_name/lab.toml               the manifest: files, checks, points, thresholds
  labs/NN_name/<name>.cu              the skeleton, every step a TODO(labN)
  labs/NN_name/test_<name>.cpp        the checks
  solutions/NN_name/<name>.cu         the reference solution (mirrors the skeleton)
  handouts/NN_name.md                 the handout's sections
  tests/variants/NN_name/solution/expect.toml, .../skeleton/expect.toml
                                      the framework's tests on the two known files

The example they hold is a working lab (a copy, out = in): the build, the
grader and the release find it at once, the skeleton fails with "not
implemented yet" and the solution passes, before a line of the real lab is
written. NN is the lab's number (its place in the course and its TODO(labN)
tag); name is lower case, digits and underscores. An existing lab, a number
already taken, or a malformed name is refused and nothing is written.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("new_lab.py needs Python 3.11 or newer (tomllib)")

NAME = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")
TEMPLATE_DIR = "tools/lab_template"


def fail(msg):
    print(f"cudalab new-lab: {msg}", file=sys.stderr)
    sys.exit(2)


def existing_labs(src):
    root = os.path.join(src, "labs")
    return sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "lab.toml")))


def plan(src, lab_id):
    """(template, destination) pairs, destinations relative to src."""
    stem = NAME.match(lab_id).group(2)
    return [
        ("lab.toml.in", f"labs/{lab_id}/lab.toml"),
        ("skeleton.cu.in", f"labs/{lab_id}/{stem}.cu"),
        ("test.cpp.in", f"labs/{lab_id}/test_{stem}.cpp"),
        ("solution.cu.in", f"solutions/{lab_id}/{stem}.cu"),
        ("handout.md.in", f"handouts/{lab_id}.md"),
        ("variant_solution.toml.in", f"tests/variants/{lab_id}/solution/expect.toml"),
        ("variant_skeleton.toml.in", f"tests/variants/{lab_id}/skeleton/expect.toml"),
    ]


def check_name(src, lab_id, title):
    m = NAME.match(lab_id)
    if not m:
        fail(f"'{lab_id}' is not a lab name: two digits, an underscore, then lower-case letters, digits and "
             f"underscores, starting with a letter (e.g. 05_reduction)")
    if len(m.group(2)) > 40:
        fail(f"'{lab_id}': keep the name under 40 characters (it names files, targets and messages)")
    if not title.strip() or '"' in title or "\\" in title or "\n" in title:
        fail("the title must be one line of text without \" or \\ (it goes into lab.toml and the handout)")
    if m.group(1) == "00":
        fail(f"'{lab_id}': lab numbers start at 01 (the number is the lab's TODO(labN) tag)")
    labs = existing_labs(src)
    taken = [l for l in labs if l[:2] == m.group(1)]
    if lab_id in labs:
        fail(f"labs/{lab_id} exists already")
    if taken:
        fail(f"lab number {m.group(1)} is taken by labs/{taken[0]}: each lab has its own number "
             f"(its place in the course and its TODO(lab{int(m.group(1))}) tag)")
    for _, dest in plan(src, lab_id):
        if os.path.exists(os.path.join(src, dest)):
            fail(f"{dest} exists already: remove it, or choose another name")
    for d in (f"labs/{lab_id}", f"solutions/{lab_id}", f"tests/variants/{lab_id}"):
        if os.path.exists(os.path.join(src, d)):
            fail(f"{d}/ exists already: remove it, or choose another name")


def course_note(src, lab_id):
    """What to do in course.toml, if anything: a course that lists its labs grades only those."""
    path = os.path.join(src, "course.toml")
    try:
        with open(path, "rb") as f:
            course = tomllib.load(f).get("course", {})
    except (OSError, tomllib.TOMLDecodeError):
        return ""
    if "labs" not in course:
        return "course.toml lists no labs, so every lab in labs/ counts: this one is graded from now on."
    return (f"course.toml lists its labs ([course] labs): add \"{lab_id}\" there when it is ready to be "
            f"graded (until then `cudalab grade` leaves it out).")


def main():
    ap = argparse.ArgumentParser(description="Lay out a new lab's files from tools/lab_template/")
    ap.add_argument("--source", required=True, help="the instructor's tree")
    ap.add_argument("name", help="NN_name, e.g. 05_reduction")
    ap.add_argument("title", help='the lab\'s title, e.g. "Sum reduction"')
    a = ap.parse_args()
    src = os.path.realpath(a.source)
    if not os.path.isdir(os.path.join(src, "solutions")) or not os.path.isdir(os.path.join(src, TEMPLATE_DIR)):
        fail(f"{src} is not the instructor's tree (no solutions/ or {TEMPLATE_DIR}/): new labs are written "
             f"there, not in a student release")
    check_name(src, a.name, a.title)
    m = NAME.match(a.name)
    values = {"@ID@": a.name, "@NN@": m.group(1), "@N@": str(int(m.group(1))), "@STEM@": m.group(2),
              "@TITLE@": a.title.strip()}
    written = []
    for template, dest in plan(src, a.name):
        with open(os.path.join(src, TEMPLATE_DIR, template)) as f:
            text = f.read()
        for k, v in values.items():
            text = text.replace(k, v)
        path = os.path.join(src, dest)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "x") as f:
            f.write(text)
        written.append(dest)
    # The lab's name changes line lengths: formatted as the project formats
    # its C++ (tools/format.py, .clang-format), where clang-format is.
    if clang_format := shutil.which("clang-format"):
        subprocess.run([clang_format, "-i", "--style=file"] +
                       [os.path.join(src, w) for w in written if w.endswith((".cu", ".cpp"))], check=False)
    # The tables made from the manifests: the new handout's table of
    # diagnoses (its lab.toml's [diagnosis]) and the primer's table of what to
    # hand in, which lists every lab (tools/cause_tables.py), so that no file
    # outside the lab's needs an edit by hand.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cause_tables
    if cause_tables.write_or_check(src, write=True, check=False) != 0:
        fail("the handouts' tables could not be written (tools/cause_tables.py . --write says why)")
    print(f"cudalab new-lab: wrote lab {a.name}, \"{values['@TITLE@']}\":")
    for w in written:
        print(f"  {w}")
    print(f"It is a working example (out = in): `./cudalab test {a.name}` builds it, the skeleton fails with "
          f"\"not implemented yet\".")
    print("Replace the example with the lab's own work: docs/new-lab.md is the guide.")
    if note := course_note(src, a.name):
        print(note)


main()
