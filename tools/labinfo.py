#!/usr/bin/env python3
"""Reads lab manifests (lab.toml) for the Meson build, so that the manifest's
lists of files are the only lists: the build, the grader and the release all
read the same one.

  labinfo.py list LABS_DIR            lab ids (folders with a lab.toml), one per line
  labinfo.py get LAB_TOML FIELD       a [lab] field; lists print one item per line
  labinfo.py value TOML KEY           a top-level string of any TOML file ("" if absent)
  labinfo.py variants DIR             subfolders holding an expect.toml, one per line
  labinfo.py stamp LABS_DIR           LABS_DIR made absolute, then its lab ids: what a build was
                                      configured with (build/labs/configured-labs.txt)

The grader parses the same files with toml++ and validates them fully; this
script only checks what the build needs.
"""
import os
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("labinfo.py needs Python 3.11 or newer (tomllib)")

LIST_FIELDS = ("student_files", "tests", "references", "launchers")


def load(path):
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        sys.exit(f"{path}: file not found")
    except tomllib.TOMLDecodeError as e:
        sys.exit(f"{path}: {e}")
    lab = doc.get("lab")
    if not isinstance(lab, dict):
        sys.exit(f"{path}: missing the [lab] table")
    for field in LIST_FIELDS:
        value = lab.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            sys.exit(f"{path}: [lab] {field} must be a list of file or lab names")
        for v in value:
            if "/" in v or "\\" in v or v.startswith("."):
                sys.exit(f"{path}: [lab] {field}: '{v}' must be a plain name, without folders")
    if not lab.get("student_files"):
        sys.exit(f"{path}: [lab] student_files must name at least one file")
    if not lab.get("tests"):
        sys.exit(f"{path}: [lab] tests must name at least one file")
    return lab


def lab_ids(root):
    return [name for name in sorted(os.listdir(root)) if os.path.isfile(os.path.join(root, name, "lab.toml"))]


def main(argv):
    if len(argv) == 3 and argv[1] == "list":
        for name in lab_ids(argv[2]):
            print(name)
        return
    if len(argv) == 3 and argv[1] == "stamp":
        print(os.path.abspath(argv[2]))
        for name in lab_ids(argv[2]):
            print(name)
        return
    if len(argv) == 4 and argv[1] == "get":
        value = load(argv[2]).get(argv[3], [] if argv[3] in LIST_FIELDS else "")
        print("\n".join(value) if isinstance(value, list) else value)
        return
    if len(argv) == 4 and argv[1] == "value":
        try:
            with open(argv[2], "rb") as f:
                value = tomllib.load(f).get(argv[3], "")
        except (OSError, tomllib.TOMLDecodeError) as e:
            sys.exit(f"{argv[2]}: {e}")
        print(value if isinstance(value, str) else "")
        return
    if len(argv) == 3 and argv[1] == "variants":
        for name in sorted(os.listdir(argv[2])):
            if os.path.isfile(os.path.join(argv[2], name, "expect.toml")):
                print(name)
        return
    sys.exit(__doc__)


main(sys.argv)
