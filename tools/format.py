#!/usr/bin/env python3
"""Runs clang-format over the project's C++ and CUDA files (git-tracked ones).

  format.py [--check] CLANG_FORMAT

--check changes nothing and fails, listing the files, if any file is not
formatted (the `format-check` target); without it, formats them in place
(the `format` target).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

EXTS = (".cpp", ".h", ".cu", ".cuh", ".hpp")
# Kept as written: the gallery's files are student submissions (some do not
# even compile, on purpose), and simt's tests check source line numbers.
EXCLUDE = ("tests/gallery/", "simt/tests/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="change nothing; fail, listing the files, if any file is not formatted")
    ap.add_argument("clang_format", nargs="?", default="clang-format", help="the clang-format program to run")
    a = ap.parse_args()
    root = os.environ.get("MESON_SOURCE_ROOT") or os.getcwd()
    try:
        files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # a copy of the tree without .git
        files = [os.path.relpath(os.path.join(d, f), root)
                 for d, dirs, names in os.walk(root)
                 if not os.path.relpath(d, root).split(os.sep)[0].startswith(("build", ".", "results"))
                 for f in names]
    files = [f for f in files if f.endswith(EXTS) and not f.startswith(EXCLUDE)]

    def one(f):
        """The file's name if it is not formatted (--check); formats it otherwise."""
        path = os.path.join(root, f)
        if a.check:
            r = subprocess.run([a.clang_format, "--dry-run", "-Werror", path], capture_output=True, text=True)
            return f if r.returncode != 0 else None
        subprocess.run([a.clang_format, "-i", path], check=True)
        return None

    # One clang-format per file, a few at once: 230 files one after the other
    # took over the test's time on two busy cores.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        bad = [f for f in pool.map(one, files) if f]
    if bad:
        print("not formatted (run `meson compile -C build format`):\n  " + "\n  ".join(bad))
        return 1
    print(f"{len(files)} files {'checked' if a.check else 'formatted'}")
    return 0


sys.exit(main())
