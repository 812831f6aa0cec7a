#!/usr/bin/env python3
"""Writes entries of the rogues' gallery as a Gradescope submission export.

  gradescope_export.py SOURCE_ROOT OUT [--only TEXT]... [--gpu-only]

OUT/export/ gets what Gradescope's "Export Submissions" gives an instructor
(unpacked): one folder submission_<id>/ per entry with its files, and
submission_metadata.yml naming a made-up student for each (name, SID, email)
and a submission time: on time for most, one and two days late for the
second and third. OUT/course.toml is the gallery's course with one
assignment, "gallery", of every lab, due before those times with a late
rule, so that `cudalab grade --batch OUT/export --from gradescope
--assignment gallery --course OUT/course.toml` runs the round trip on the
gallery: its gradebook, its feedback files and its late penalties.
Entries handed in as archives are left out (Gradescope unpacks uploads).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_gallery  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source_root")
    ap.add_argument("out")
    ap.add_argument("--only", action="append", default=[], help="only entries whose name contains this")
    ap.add_argument("--gpu-only", action="store_true", help="only the entries graded on a GPU")
    a = ap.parse_args()
    src = os.path.abspath(a.source_root)
    gallery = os.path.join(src, "tests", "gallery")
    labs = run_gallery.load_labs(src)
    entries = []
    for name in sorted(os.listdir(gallery)):
        folder = os.path.join(gallery, name)
        if not os.path.isfile(os.path.join(folder, "entry.toml")):
            continue
        if a.only and not any(o in name for o in a.only):
            continue
        e = run_gallery.load_entry(folder, labs)
        if (a.gpu_only and not e["gpu"]) or e.get("archive"):
            continue
        entries.append(e)
    export = os.path.join(a.out, "export")
    os.makedirs(export)
    lines = []
    for i, e in enumerate(entries):
        sid = 1000 + i
        folder = f"submission_{sid}"
        e = dict(e, name=folder)
        run_gallery.write_submission(e, run_gallery.entry_items(e, src, labs), export)
        late_days = {1: 1, 2: 2}.get(i, 0)
        day = 5 + late_days
        lines += [f"{folder}:",
                  "  :submitters:",
                  f"  - :name: {entries[i]['name'].replace('_', ' ')}",
                  f"    :sid: '{sid}'",
                  f"    :email: s{sid}@example.edu",
                  f"  :created_at: 2026-12-0{day} 23:{10 + i % 40:02d}:07.000000000 -05:00",
                  "  :score: 0.0"]
    with open(os.path.join(export, "submission_metadata.yml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "course.toml"), "w") as f:
        f.write("# The rogues' gallery as one assignment, due before the export's times.\n"
                "[course]\ntitle = \"rogues' gallery\"\n"
                f"labs = [{', '.join(json.dumps(l) for l in labs)}]\n"
                f"[grading]\nseed = {run_gallery.SEED}\ncheck_timeout_s = {run_gallery.CHECK_TIMEOUT_S}\n"
                "[[assignment]]\nname = \"gallery\"\n"
                f"labs = [{', '.join(json.dumps(l) for l in labs)}]\n"
                "due = 2026-12-05T23:59:00-05:00\nlate = { per_day = 0.10, max_days = 3 }\n")
    print(f"{len(entries)} submissions in {export}; course file {os.path.join(a.out, 'course.toml')}")


if __name__ == "__main__":
    main()
