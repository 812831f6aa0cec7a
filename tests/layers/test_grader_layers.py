#!/usr/bin/env python3
"""The grader's folders are layers: a file includes only from its own folder
and the folders below it, and no two of its modules (a .h with its .cpp)
include each other.

    core       the grade's records and the rules that make them (judged,
               score, the grade document, the late rule, limits): includes
               nothing of the grader above it
    run        running a check's process, confined, and reading what it wrote
    views      the grade document rendered: text, HTML, CSV, the platforms'
               formats, the class view
    platforms  the platforms' exports read and their gradebooks written
    pipeline   grading a submission: stage, build, checks, second looks, speed
    authoring  a lab author's tools: variants' expectations, calibration
    commands   the `cudalab` subcommands, which may use any of them

Run: test_grader_layers.py SOURCE_ROOT. Prints every arrow that points up and
every pair that includes each other; exit 1 if there is one.
"""
import os
import re
import sys

ALLOWED = {
    "core": {"core"},
    "run": {"core", "run"},
    "views": {"core", "views"},
    "platforms": {"core", "views", "platforms"},
    "pipeline": {"core", "run", "pipeline"},
    "authoring": {"core", "run", "views", "authoring"},
    "commands": {"core", "run", "views", "platforms", "pipeline", "authoring", "commands"},
    "": {"commands"},  # main.cpp, student_main.cpp
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A view reads a speed check's ratio, pass line and credit points from the
# grade's typed speed outcome (core/score.h SpeedOutcome), never by looking a
# measurement or threshold up by its name.
LOOKUP = re.compile(r'(find|count|at)\("(ratio|min_ratio|zero_at|full_at)"\)|==\s*"(ratio|min_ratio)"')
VIEWS = ("views", "platforms")


def grader_files(root):
    grader = os.path.join(root, "grader")
    for folder, _, names in os.walk(grader):
        for name in sorted(names):
            if name.endswith((".h", ".cpp")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, grader).replace(os.sep, "/")


def includes(root, rel):
    with open(os.path.join(root, "grader", rel), encoding="utf-8") as f:
        text = f.read()
    for inc in INCLUDE.findall(text):
        if os.path.exists(os.path.join(root, "grader", inc)):
            yield inc


def folder(rel):
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def module(rel):
    return rel.rsplit(".", 1)[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = []
    uses = {}  # module -> modules it includes
    files = list(grader_files(root))
    for rel in files:
        f = folder(rel)
        if f not in ALLOWED:
            problems.append(f"grader/{rel}: in grader/{f}/, which is not one of the layers "
                            f"({', '.join(sorted(k for k in ALLOWED if k))}): add it to this test's table")
            continue
        if f in VIEWS:
            with open(os.path.join(root, "grader", rel), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if LOOKUP.search(line):
                        problems.append(f"grader/{rel}:{n}: looks a speed number up by name: read the grade's "
                                        f"speed outcome (CheckScore::speed) instead")
        for inc in includes(root, rel):
            if folder(inc) not in ALLOWED[f]:
                problems.append(f"grader/{rel} includes {inc}: {f or 'the root'} may include only from "
                                f"{', '.join(sorted(ALLOWED[f]))}")
            if module(inc) != module(rel):
                uses.setdefault(module(rel), set()).add(module(inc))
    for a in sorted(uses):
        for b in sorted(uses[a]):
            if a < b and a in uses.get(b, set()):
                problems.append(f"grader/{a} and grader/{b} include each other: one of them should not "
                                f"need the other (move what both need below them)")
    for p in problems:
        print(p)
    print(f"{len(files)} files in grader/: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
