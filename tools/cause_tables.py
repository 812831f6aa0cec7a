#!/usr/bin/env python3
"""The handouts' tables made from the labs' manifests: each lab's table of
diagnoses, and the primer's table of what to hand in.

  cause_tables.py SOURCE_ROOT            print each lab's table
  cause_tables.py SOURCE_ROOT --write    put them in handouts/<lab>.md and
                                         handouts/00_cuda_primer.md
  cause_tables.py SOURCE_ROOT --check    exit 1 where a table is not what the
                                         lab.toml files make

The primer's hand-in table lists every lab's student_files, between
<!-- hand-in:begin ... --> and <!-- hand-in:end -->: a new lab's files are
in it once this is run (`cudalab new-lab` runs it), with no edit by hand.

A failing correctness check leads with one `Diagnosis:` naming a cause from
the closed list of harness/include/cudalab/vocabulary.h, and ends with the fix
in the lab's words: lab.toml's [diagnosis], which replace the general words
(harness/src/diagnosis.cpp). A handout's table of those causes is the same
words, between the markers

  <!-- causes:begin (made by tools/cause_tables.py in the course repository, from lab.toml's [diagnosis]: edit it there) -->
  <!-- causes:end -->

so what the handout says and what the grader prints cannot drift apart. The
causes' titles (what class.csv and the batch page call them) are read from
harness/src/vocabulary.cpp, the one table of them. Python's standard library
only; nothing is built.
"""
import argparse
import os
import re
import sys
import tomllib

BEGIN = "<!-- causes:begin (made by tools/cause_tables.py in the course repository, from lab.toml's [diagnosis]: edit it there) -->"
END = "<!-- causes:end -->"
PRIMER = os.path.join("handouts", "00_cuda_primer.md")
HAND_IN_BEGIN = ("<!-- hand-in:begin (made by tools/cause_tables.py in the course repository, from each "
                 "lab.toml's student_files: edit them there) -->")
HAND_IN_END = "<!-- hand-in:end -->"


def titles(root):
    """cause id -> title, from kCauses in harness/src/vocabulary.cpp (rows {Cause::x, "id", "title"})."""
    text = open(os.path.join(root, "harness", "src", "vocabulary.cpp")).read()
    block = text[text.index("kCauses{"):]
    block = block[:block.index("}};")]
    found = {cause_id: title for _, cause_id, title in
             re.findall(r'\{Cause::(\w+), "([^"]*)", "([^"]*)"\}', block)}
    if not found:
        sys.exit("cause_tables.py: no causes read from harness/src/vocabulary.cpp's kCauses")
    return found


def table(root, lab):
    """The Markdown between the markers for labs/<lab>/lab.toml, or None where it has no [diagnosis]."""
    with open(os.path.join(root, "labs", lab, "lab.toml"), "rb") as f:
        words = tomllib.load(f).get("diagnosis")
    if not words:
        return None
    names = titles(root)
    lines = ["A failing check leads with one `Diagnosis:`, built from all of its shapes; it names one of these "
             "causes, states what the shapes showed, and ends with what to change:",
             "",
             "| the diagnosis names | cause (in class.csv) | what to change in this lab |",
             "|---|---|---|"]
    for cause, fix in words.items():
        title = names.get(cause, f"(unknown cause {cause})")
        lines.append(f"| {title} | `{cause}` | {fix.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


def handout_block(text, begin=BEGIN, end=END):
    """(start, end) of the text between the markers, or None."""
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        return None
    return a + len(begin), b


def labs_of(root):
    labs_dir = os.path.join(root, "labs")
    return sorted(d for d in os.listdir(labs_dir) if os.path.isfile(os.path.join(labs_dir, d, "lab.toml")))


def hand_in_table(root):
    """The primer's table: each lab and the files a student hands in for it."""
    lines = ["| lab | hand in |", "|---|---|"]
    for lab in labs_of(root):
        with open(os.path.join(root, "labs", lab, "lab.toml"), "rb") as f:
            files = tomllib.load(f).get("lab", {}).get("student_files", [])
        lines.append(f"| `{lab}` | " + ", ".join(f"`labs/{lab}/{name}`" for name in files) + " |")
    return "\n".join(lines)


def hand_in(root, write):
    """The primer's hand-in table against the manifests: [] where it is current (or was written), else
    what is wrong."""
    path = os.path.join(root, PRIMER)
    if not os.path.isfile(path):
        return []
    text = open(path).read()
    where = handout_block(text, HAND_IN_BEGIN, HAND_IN_END)
    if where is None:
        return [f"{PRIMER}: no {HAND_IN_BEGIN} ... {HAND_IN_END} around its table of what to hand in"]
    want = "\n" + hand_in_table(root) + "\n"
    if text[where[0]:where[1]] == want:
        return []
    if write:
        with open(path, "w") as f:
            f.write(text[:where[0]] + want + text[where[1]:])
        print(f"{PRIMER}: its table of what to hand in written from the labs' lab.toml files")
        return []
    return [f"{PRIMER}: its table of what to hand in is not what the labs' lab.toml files say: run "
            f"tools/cause_tables.py . --write"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    a = ap.parse_args()
    return write_or_check(a.root, a.write, a.check)


def write_or_check(root, write, check):
    """Prints the tables (neither), writes them (write) or lists the stale ones on stderr (check); the
    exit code."""
    labs = labs_of(root)
    stale = [] if not (write or check) else hand_in(root, write)
    for lab in labs:
        t = table(root, lab)
        handout = os.path.join(root, "handouts", lab + ".md")
        if not (write or check):
            if t:
                print(f"## {lab}\n\n{t}\n")
            continue
        text = open(handout).read() if os.path.isfile(handout) else ""
        where = handout_block(text)
        if t is None and where is None:
            continue
        if where is None:
            stale.append(f"handouts/{lab}.md: no {BEGIN} ... {END} for the causes lab.toml's [diagnosis] words")
            continue
        want = "\n" + (t or "") + "\n"
        if text[where[0]:where[1]] == want:
            continue
        if write:
            with open(handout, "w") as f:
                f.write(text[:where[0]] + want + text[where[1]:])
            print(f"handouts/{lab}.md: its table of diagnoses written from labs/{lab}/lab.toml")
        else:
            stale.append(f"handouts/{lab}.md: its table of diagnoses is not what labs/{lab}/lab.toml's "
                         f"[diagnosis] makes: run tools/cause_tables.py . --write")
    for s in stale:
        print(s, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
