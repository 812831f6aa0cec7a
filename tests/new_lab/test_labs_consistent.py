#!/usr/bin/env python3
"""Every lab of the tree (a folder of labs/ with a lab.toml), before anything
is built: its student and test files exist, its solution mirrors the student
files, every lab it references has a lab.toml, and each [[check]] has the
TEST_CASE of its name in the lab's tests and the reverse (a check without its
test case ends "without a result" only when it is run, on every submission),
and its handout's table of diagnoses is what its lab.toml's [diagnosis] makes
(tools/cause_tables.py).
Host-only, a fraction of a second; a new lab is checked with no change here.

  test_labs_consistent.py SOURCE_ROOT
"""
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import cause_tables  # noqa: E402

SRC = sys.argv[1]


labs_dir = os.path.join(SRC, "labs")
labs = sorted(d for d in os.listdir(labs_dir) if os.path.isfile(os.path.join(labs_dir, d, "lab.toml")))
check(len(labs) > 0, f"the tree has labs ({', '.join(labs)})")
for lab in labs:
    with open(os.path.join(labs_dir, lab, "lab.toml"), "rb") as f:
        doc = tomllib.load(f)
    spec = doc.get("lab", {})
    for f in spec.get("student_files", []):
        check(os.path.isfile(os.path.join(labs_dir, lab, f)), f"{lab}: the student file labs/{lab}/{f} exists")
        check(os.path.isfile(os.path.join(SRC, "solutions", lab, f)),
              f"{lab}: its solution solutions/{lab}/{f} exists")
    tests = ""
    for f in spec.get("tests", []):
        path = os.path.join(labs_dir, lab, f)
        check(os.path.isfile(path), f"{lab}: the test file labs/{lab}/{f} exists")
        if os.path.isfile(path):
            tests += open(path).read()
    for r in spec.get("references", []):
        check(os.path.isfile(os.path.join(labs_dir, r, "lab.toml")), f"{lab}: the referenced lab {r} exists")
    cases = re.findall(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', tests)
    names = [c.get("name", "") for c in doc.get("check", [])]
    for n in names:
        check(n in cases, f"{lab}: the check \"{n}\" has its TEST_CASE")
    for c in cases:
        check(c in names, f"{lab}: the TEST_CASE \"{c}\" has its [[check]] in lab.toml")
    # The handout's table of diagnoses, made from [diagnosis] (cause_tables.py --write).
    table = cause_tables.table(SRC, lab)
    handout = os.path.join(SRC, "handouts", lab + ".md")
    text = open(handout).read() if os.path.isfile(handout) else ""
    where = cause_tables.handout_block(text)
    if table is not None or where is not None:
        check(where is not None and text[where[0]:where[1]] == "\n" + (table or "") + "\n",
              f"{lab}: handouts/{lab}.md's table of diagnoses is what lab.toml's [diagnosis] makes "
              "(python3 tools/cause_tables.py . --write)")
    for cause in (doc.get("diagnosis") or {}):
        check(cause in cause_tables.titles(SRC), f"{lab}: [diagnosis] names the cause {cause}, one of the closed list")

finish()
