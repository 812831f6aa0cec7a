#!/usr/bin/env python3
"""The rogues' gallery: bad submissions graded through `cudalab grade --batch`,
each against its expected verdict.

  run_gallery.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR [--host-only | --require-gpu | --cpu] [--only TEXT]... [--keep] [--gpus N]

Every folder tests/gallery/NN_name/ with an entry.toml is one submission for
one lab (README.md in this folder describes entry.toml); a FILE.patch there
hands in the file it makes on its base (tools/variants.py). Each submission also
carries the solution of one known-good lab (02_naive_matmul, or 03_tiling for
an entry about lab 02), which must come out untouched: full points with a GPU,
built and "not_run" without one. All submissions are graded in one batch with
a gallery course file (every lab, the grading seed, check_timeout_s = 20); the
runner then reads each submission's grade.json (never a report's text)
and prints one row per entry: expected, got, and the message.

Without a GPU (cudalab exits 3), entries marked gpu = true are reported as
"skipped (no GPU)" (they are still built, and one that does not build fails);
with --host-only they are not submitted at all. Exit code 0 when every row
that ran matched, 1 otherwise; with --require-gpu, 77 (Meson's "skipped")
when there is no GPU and nothing else failed. The last line is
`gallery: N passed, M failed, K skipped`.

With --cpu, the course sets `cpu_mode = true` and the runner hides the GPU
(CUDA_VISIBLE_DEVICES=""), so every entry's checks run in CPU mode, on a
machine with a GPU too: each entry is held against [expect] overlaid with its
[expect_cpu]; an expected speed check must come out "not_run" with every
correctness check of its lab passing; the known-good lab must pass every
correctness check. The table ends with the entries whose CPU-mode
expectation differs from the GPU's, and why.

An entry's [expect] may also bound its points: max_points (a number) and
twin (another entry, the same kernel without the trick, graded in the same
run; --only brings it along): the lab's points in grade.json must be no
more than either. `says` may be a list of phrases, each of which must appear.
`leads` is a phrase the failed check's leading "Diagnosis:" line must hold,
`cause` the cause id grade.json must keep for that check (the closed list of
harness/include/cudalab/vocabulary.h), and a failed check must never show
more than one cause. `never_says` is a phrase
(or a list) that must appear nowhere in the submission's grade.json (of which
every other result file is a view), and `max_seconds` bounds its grading
time (grade.json's seconds).

An entry may name a Unix socket (`listen = PATH`): the runner listens there
during the batch, and the entry fails if any check connected. After every
batch, no folder named `unpacked` may remain under WORK_DIR: the grader
removes what it unpacked (a failing line of the run, not a row).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import tomllib
import zipfile

STATUSES = {"graded", "missing", "build_failed", "rejected", "not_run"}
VERDICTS = {"pass", "fail", "timeout", "crash", "not_run"}
ENTRY_KEYS = {"description", "lab", "gpu", "archive", "create", "listen", "expect", "expect_cpu"}
EXPECT_KEYS = {"status", "check", "verdict", "says", "leads", "cause", "max_points", "twin", "never_says",
               "max_seconds"}
EXPECT_CPU_KEYS = EXPECT_KEYS | {"why"}
CREATE_KEYS = {"path", "from", "text", "size", "symlink", "pad_to", "count"}
SEED = 424242
CHECK_TIMEOUT_S = 20


class EntryError(Exception):
    pass


def load_labs(src):
    labs = {}
    root = os.path.join(src, "labs")
    for name in sorted(os.listdir(root)):
        toml = os.path.join(root, name, "lab.toml")
        if os.path.isfile(toml):
            with open(toml, "rb") as f:
                data = tomllib.load(f)
            labs[name] = {"student_files": data["lab"]["student_files"],
                          "checks": {c["id"]: c["name"] for c in data.get("check", [])},
                          "kinds": {c["id"]: c.get("kind", "correctness") for c in data.get("check", [])}}
    return labs


def load_entry(folder, labs):
    with open(os.path.join(folder, "entry.toml"), "rb") as f:
        e = tomllib.load(f)
    name = os.path.basename(folder)
    unknown = set(e) - ENTRY_KEYS
    if unknown:
        raise EntryError(f"{name}/entry.toml: unknown keys {sorted(unknown)}")
    for key in ("description", "lab", "gpu", "expect"):
        if key not in e:
            raise EntryError(f"{name}/entry.toml: missing '{key}'")
    if e["lab"] not in labs:
        raise EntryError(f"{name}/entry.toml: no lab '{e['lab']}' (labs: {', '.join(labs)})")
    if not isinstance(e["gpu"], bool):
        raise EntryError(f"{name}/entry.toml: gpu must be true or false")
    if e.get("archive", "zip") != "zip":
        raise EntryError(f"{name}/entry.toml: archive may only be \"zip\"")
    x = e["expect"]
    unknown = set(x) - EXPECT_KEYS
    if unknown:
        raise EntryError(f"{name}/entry.toml: unknown keys in [expect]: {sorted(unknown)}")
    xc = e.get("expect_cpu", {})
    unknown = set(xc) - EXPECT_CPU_KEYS
    if unknown:
        raise EntryError(f"{name}/entry.toml: unknown keys in [expect_cpu]: {sorted(unknown)}")
    if xc and "why" not in xc:
        raise EntryError(f"{name}/entry.toml: [expect_cpu] needs a 'why': how CPU mode differs from a GPU here")
    for table, t in (("expect", x), ("expect_cpu", xc)):
        if "status" in t:
            status = t["status"]
            t["status"] = [status] if isinstance(status, str) else status
            if not t["status"] or any(s not in STATUSES for s in t["status"]):
                raise EntryError(f"{name}/entry.toml: [{table}] status must be one of (or a list of) "
                                 f"{sorted(STATUSES)}")
        if "check" in t and t["check"] not in labs[e["lab"]]["checks"]:
            raise EntryError(f"{name}/entry.toml: {e['lab']} has no check '{t['check']}'")
        for key in ("says", "never_says"):
            if key in t:
                says = t[key]
                t[key] = [says] if isinstance(says, str) else says
                if not isinstance(t[key], list) or not t[key] or any(not isinstance(p, str) or not p for p in t[key]):
                    raise EntryError(f"{name}/entry.toml: [{table}] {key} must be a phrase or a list of phrases")
        if "max_seconds" in t and (isinstance(t["max_seconds"], bool) or not isinstance(t["max_seconds"], (int, float))
                                   or t["max_seconds"] <= 0):
            raise EntryError(f"{name}/entry.toml: [{table}] max_seconds must be a number > 0")
        if "max_points" in t and (isinstance(t["max_points"], bool) or not isinstance(t["max_points"], (int, float))
                                  or t["max_points"] < 0):
            raise EntryError(f"{name}/entry.toml: [{table}] max_points must be a number >= 0")
        if "twin" in t and (not isinstance(t["twin"], str) or not os.path.isfile(
                os.path.join(os.path.dirname(folder), t["twin"], "entry.toml"))):
            raise EntryError(f"{name}/entry.toml: [{table}] twin must name another entry's folder")
        if t.get("twin") == name:
            raise EntryError(f"{name}/entry.toml: [{table}] twin must be another entry")
    if "status" not in x:
        raise EntryError(f"{name}/entry.toml: [expect] needs a status")
    for table, t in (("expect", x), ("expect_cpu", {**x, **xc})):
        if "verdict" in t and ("check" not in t or t["verdict"] not in VERDICTS):
            raise EntryError(f"{name}/entry.toml: [{table}] verdict needs a check and is one of {sorted(VERDICTS)}")
    for c in e.get("create", []):
        if set(c) - CREATE_KEYS or "path" not in c:
            raise EntryError(f"{name}/entry.toml: [[create]] takes path and {sorted(CREATE_KEYS - {'path'})}")
        if "count" in c and (isinstance(c["count"], bool) or not isinstance(c["count"], int) or c["count"] < 1
                             or "{i}" not in c["path"] or "symlink" in c):
            raise EntryError(f"{name}/entry.toml: [[create]] count is a whole number >= 1, with \"{{i}}\" in the "
                             "path (not for a symlink)")
    if "listen" in e and (not isinstance(e["listen"], str) or not os.path.isabs(e["listen"])
                          or len(e["listen"].encode()) > 100):
        raise EntryError(f"{name}/entry.toml: listen must be an absolute path (of at most 100 bytes)")
    e["name"] = name
    e["folder"] = folder
    return e


def extra_lab(entry):
    return "03_tiling" if entry["lab"] == "02_naive_matmul" else "02_naive_matmul"


def source_tree(src):
    """tools/variants.py's view of the source tree, where FILE.patch stands
    for FILE (tests/variants/README.md)."""
    spec = importlib.util.spec_from_file_location("variants", os.path.join(src, "tools", "variants.py"))
    variants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(variants)
    return variants.Tree(src), variants.PatchError


def entry_items(entry, src, labs):
    """What the submission holds: (relative path, kind, value) with kind
    'bytes', 'sparse' (a size) or 'symlink' (a target). An entry's FILE.patch,
    and a [[create]] from = FILE where FILE.patch stands for FILE, give the
    file the patch makes on its base."""
    items = []
    folder = entry["folder"]
    tree, PatchError = source_tree(src)
    try:
        for dirpath, _, files in os.walk(folder):
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, f), folder)
                if rel == "entry.toml":
                    continue
                if rel.endswith(".patch"):
                    if os.path.exists(os.path.join(folder, rel[:-len(".patch")])):
                        raise EntryError(f"{entry['name']}: both {rel[:-len('.patch')]} and {rel}: keep one")
                    items.append((rel[:-len(".patch")], "bytes",
                                  tree.make(os.path.relpath(os.path.join(dirpath, f), tree.root).replace(os.sep, "/"))))
                    continue
                with open(os.path.join(folder, rel), "rb") as fh:
                    items.append((rel, "bytes", fh.read()))
        froms = {c["from"]: tree.read(c["from"]) for c in entry.get("create", []) if "from" in c}
    except PatchError as e:
        raise EntryError(f"{entry['name']}: {e}")
    for c in entry.get("create", []):
        # count = N: N files, "{i}" in the path numbered 1 to N (zero-padded to N's width).
        count = c.get("count")
        paths = ([c["path"].replace("{i}", f"{i:0{len(str(count))}d}") for i in range(1, count + 1)]
                 if count else [c["path"]])
        if "symlink" in c:
            items.append((paths[0], "symlink", c["symlink"].replace("{source}", os.path.abspath(src))))
            continue
        if "size" in c:
            items += [(path, "sparse", int(c["size"])) for path in paths]
            continue
        data = froms.get(c.get("from"), b"")
        data += c.get("text", "").encode()
        if "pad_to" in c:
            line = b"// padding: this student file is over the size limit for a source file.............\n"
            data += line * max(0, (int(c["pad_to"]) - len(data) + len(line) - 1) // len(line))
        items += [(path, "bytes", data) for path in paths]
    # The known-good lab: beside the entry's files (in labs/<lab>/ for a repo
    # layout, inside the one top folder of a nested submission).
    paths = [p for p, _, _ in items]
    tops = {p.split("/")[0] for p in paths}
    if any(p.startswith("labs/") for p in paths):
        where = f"labs/{extra_lab(entry)}/"
    elif len(tops) == 1 and all("/" in p for p in paths):
        where = tops.pop() + "/"
    else:
        where = ""
    for f in labs[extra_lab(entry)]["student_files"]:
        with open(os.path.join(src, "solutions", extra_lab(entry), f), "rb") as fh:
            items.append((where + f, "bytes", fh.read()))
    return items


def write_submission(entry, items, batch):
    if entry.get("archive") == "zip":
        with zipfile.ZipFile(os.path.join(batch, entry["name"] + ".zip"), "w") as z:
            zeros = b""
            for rel, kind, value in items:
                if kind == "sparse":
                    # A zip holds no sparse file: `size` zero bytes, deflated
                    # (9 MiB of zeros packs into about 9 KiB).
                    if len(zeros) != value:
                        zeros = bytes(value)
                    z.writestr(rel, zeros, compress_type=zipfile.ZIP_DEFLATED)
                elif kind == "bytes":
                    z.writestr(rel, value)
                else:
                    raise EntryError(f"{entry['name']}: a zip entry may not create a symbolic link")
        return
    root = os.path.join(batch, entry["name"])
    os.makedirs(root)
    for rel, kind, value in items:
        if ".." in rel.split("/") or rel.startswith("/"):
            raise EntryError(f"{entry['name']}: {rel!r} leaves the submission folder (only a zip entry may)")
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "symlink":
            os.symlink(value, path)
        elif kind == "sparse":
            with open(path, "wb") as f:
                f.truncate(value)
        else:
            with open(path, "wb") as f:
                f.write(value)


GRADE_FORMAT = "cudalab-grade/3"  # grader/core/grade_document.h kGradeFormat


def grade_labs(grade):
    """grade.json's labs by id."""
    return {l["id"]: l for l in grade.get("labs", [])}


def check_text(check):
    """What the student reads of one check, from grade.json, in the order the
    reports show it: its verdict, its measurements, failures, notes, the
    points' reason and its output."""
    measured = ", ".join(f"{m['key']} {m['value']:g} {m['unit']}".strip() for m in check.get("measurements", [])
                         if not m["key"].startswith("chart_"))
    lines = [check["verdict"]] + ([measured] if measured else []) + check.get("failures", []) + check.get("notes", [])
    if check.get("why"):
        lines.append("points: " + check["why"])
    if check.get("output"):
        lines.append("output:\n" + check["output"])
    return "\n".join(lines)


def lab_points(grade, lab):
    """The lab's weighted points in grade.json."""
    l = grade_labs(grade).get(lab)
    return l["weight"] * l["points"] if l else 0.0


def find_check(grade, lab, check_id):
    l = grade_labs(grade).get(lab)
    return next((c for c in l["checks"] if c["id"] == check_id), None) if l else None


def contains(text, phrase):
    return phrase.lower() in text.lower()


def line_with(text, phrase):
    for line in text.split("\n"):
        if contains(line, phrase):
            return line.strip()
    return ""


def lead_of(check):
    """What a student reads first as the cause of a failed check (as grader/authoring/expect.h's
    leading_line): its "Diagnosis:" line, else the first line of its failures
    (then of its notes)."""
    lines = [l.strip() for t in check.get("failures", []) + check.get("notes", [])
             for l in t.split("\n") if l.strip()]
    return next((l for l in lines if l.startswith("Diagnosis:")), lines[0] if lines else "")


RAW_SANITIZER = re.compile(r"^=========|\+0x[0-9a-fA-F]|hazards displayed")


def message_problems(check):
    """What no failing check's messages may do (as grader/authoring/expect.h's
    message_problem): a "Diagnosis:" line anywhere but first, "(below)" with
    nothing below it, a sanitizer's raw lines. A list of problems."""
    lines = [l.strip() for t in check.get("failures", []) for l in t.split("\n") if l.strip()]
    out = []
    for i, l in enumerate(lines):
        if l.startswith("Diagnosis:") and i > 0:
            out.append(f"a second or late Diagnosis line: {l[:120]}")
        if "(below)" in l and i + 1 == len(lines):
            out.append(f"\"(below)\" with nothing below: {l[:120]}")
        if RAW_SANITIZER.search(l):
            out.append(f"raw sanitizer output: {l[:120]}")
    return out


def first_line(text):
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


class Row:
    def __init__(self, entry):
        self.entry = entry
        self.state = "pass"  # pass | fail | skipped
        self.got = ""
        self.message = ""
        self.problems = []
        self.points = None  # the lab's points in grade.json, where its checks ran
        self.lead = ""  # the failed check's lead (lead_of), for --table
        self.cause = ""  # the cause id grade.json keeps for that check

    def fail(self, why):
        self.state = "fail"
        self.problems.append(why)


def expectation(entry, labs, mode):
    """The entry's expectation in this mode: [expect], and in CPU mode
    [expect_cpu] over it; an expected speed check is "not_run" in CPU mode."""
    x = dict(entry["expect"])
    if mode != "cpu":
        return x
    xc = entry.get("expect_cpu", {})
    if "status" in xc and "graded" not in xc["status"]:
        # Not graded in CPU mode (e.g. it does not build there): the GPU's
        # check, verdict and message do not apply unless [expect_cpu] says them.
        for k in ("check", "verdict", "says", "leads", "cause"):
            x.pop(k, None)
    x.update({k: v for k, v in xc.items() if k != "why"})
    if "check" in x and labs[entry["lab"]]["kinds"][x["check"]] == "speed" and "verdict" not in xc:
        x["verdict"] = "not_run"  # CPU mode never times; the kernel must still be correct
        x["speed_in_cpu_mode"] = True
        if "says" not in xc:
            x.pop("says", None)
        x.pop("leads", None)
        x.pop("cause", None)
    return x


def cpu_differences(entries, labs):
    """(entry, GPU expectation, CPU-mode expectation, why) where they differ."""
    out = []
    for e in entries:
        g, c = expectation(e, labs, "gpu"), expectation(e, labs, "cpu")
        if expected_text(g) != expected_text(c):
            why = e.get("expect_cpu", {}).get("why")
            if c.get("speed_in_cpu_mode"):
                why = why or "a speed check: CPU mode never times (the lab's correctness checks must pass)"
            out.append((e, g, c, why or ""))
    return out


def expected_text(x):
    s = "|".join(x["status"])
    if "check" in x:
        s += f" {x['check']}" + (f"={x['verdict']}" if "verdict" in x else "")
    if "max_points" in x:
        s += f" pts<={x['max_points']:g}"
    if "twin" in x:
        s += " pts<=twin"
    if "max_seconds" in x:
        s += f" <={x['max_seconds']:g}s"
    if "never_says" in x:
        s += " never_says"
    return s


def check_points_limits(rows, labs, mode):
    """[expect] max_points and twin: the entry's points in its lab must be no
    more than max_points and than the points its twin (the same kernel
    without the trick, an entry of the same run) got. Checked where the
    checks ran (with a GPU, or in CPU mode)."""
    by_name = {r.entry["name"]: r for r in rows}
    for r in rows:
        x = expectation(r.entry, labs, mode)
        if r.points is None or ("max_points" not in x and "twin" not in x):
            continue
        limits = []
        if "max_points" in x:
            limits.append((float(x["max_points"]), "max_points"))
        if "twin" in x:
            t = by_name.get(x["twin"])
            if t is None or t.points is None or t.entry["lab"] != r.entry["lab"]:
                r.fail(f"its twin {x['twin']} was not graded in this run (or is for another lab)")
                continue
            limits.append((t.points, f"its twin {x['twin']}"))
        limit, what = min(limits)
        r.got += f" pts {r.points:g}/{limit:g}"
        if r.points > limit + 1e-9:
            r.fail(f"{r.points:g} points in {r.entry['lab']}, more than {limit:g} ({what})")


def judge(entry, out_dir, labs, mode, src, work):
    """mode: "gpu" (cudalab exited 0 with a GPU), "cpu" (exited 0 in CPU mode)
    or "none" (exited 3: built, checks not run). Reads the submission's
    grade.json (grader/schema/grade.schema.json), never a report's text."""
    row = Row(entry)
    gpu = mode == "gpu"
    ran = mode in ("gpu", "cpu")  # the checks ran
    lab, x = entry["lab"], expectation(entry, labs, mode)
    sub = os.path.join(out_dir, entry["name"])
    try:
        with open(os.path.join(sub, "grade.json")) as f:
            grade_text = f.read()
        grade = json.loads(grade_text)
        if grade.get("format") != GRADE_FORMAT:
            raise ValueError(f"format {grade.get('format')!r}, not {GRADE_FORMAT}")
        by_lab = grade_labs(grade)
    except (OSError, ValueError, KeyError, TypeError) as e:
        row.got = "no results"
        row.fail(f"cannot read the grade in {sub}: {e}")
        return row
    statuses = {l: by_lab[l]["status"] if l in by_lab else "graded" for l in labs}
    # The grader refused the submission as a whole (an archive it will not
    # unpack), so every lab is missing, the known-good one too, and no check
    # ran. Right only where the entry expects its lab "missing".
    unreadable = bool(grade.get("error")) and "missing" in x["status"]
    if grade.get("error") and not unreadable:
        row.fail(f"the grade says the submission is unreadable: {first_line(grade['error'])}")
    got = statuses[lab]
    if ran:
        row.points = lab_points(grade, lab)
    if not unreadable and grade.get("mode") != mode:
        row.fail(f"grade.json's mode is {grade.get('mode')}, the exit code says {mode}")
    other = "\n".join([grade.get("error", "")] + grade.get("ignored", []) + grade.get("notes", []))

    expected = list(x["status"])
    if not ran and "graded" in expected:
        expected.append("not_run")  # built; without a GPU the checks are not run
    test = find_check(grade, lab, x["check"]) if "check" in x else None
    verdict = test["verdict"] if test else ""
    row.got = got + (f" {x['check']}={verdict}" if test and (ran or got != "not_run") else "")
    lab_grade = by_lab.get(lab, {"points": 0, "max_points": 0, "message": ""})
    lab_text = lab_grade["message"]
    if got == "graded" and lab in by_lab:
        row.message = f"{lab_grade['points']:g} / {lab_grade['max_points']:g} points"
    else:
        row.message = first_line(lab_text)

    if entry["gpu"] and not ran:
        row.state = "skipped"
        row.message = "skipped (no GPU)"
        if "graded" in x["status"] and got != "not_run":
            row.fail(f"without a GPU it should build (not_run), got {got}: {first_line(lab_text)}")
        check_never_says_and_time(row, x, grade, grade_text)
        return row

    if got not in expected:
        row.fail(f"status {got}, expected {' or '.join(expected)}")
    checks_ran = ran or got not in ("graded", "not_run")
    if test is None and "check" in x:
        row.fail(f"grade.json has no check '{x['check']}' in {lab}")
    elif test is not None and checks_ran:
        if "verdict" in x and verdict != x["verdict"]:
            row.fail(f"{x['check']}: verdict {verdict}, expected {x['verdict']}")
        row.message = first_line("\n".join(check_text(test).split("\n")[1:]))
    says = x.get("says", [])
    if says and (test is None or checks_ran):
        # Every phrase, each on some line; the message shown is the first's.
        text = check_text(test) if test is not None else lab_text + "\n" + other
        hit = line_with(text, says[0])
        if hit:
            row.message = hit
        for phrase in says:
            if not line_with(text, phrase):
                row.fail(f"the message does not say \"{phrase}\"")
    if test is not None and checks_ran and verdict not in ("", "pass", "not_run"):
        # One cause leads, and where the entry names it, the right one.
        text = check_text(test)
        row.lead = lead_of(test)
        causes = text.count("Diagnosis:") + text.count("Likely cause:")
        if causes > 1:
            row.fail(f"{x.get('check')}: the message gives {causes} causes; a student should read one")
        row.cause = test.get("cause", "")
        if x.get("cause") and row.cause != x["cause"]:
            row.fail(f"{x.get('check')}: the cause is {row.cause or '(none)'}, expected {x['cause']}")
        if x.get("leads"):
            if not contains(row.lead, x["leads"]):
                row.fail(f"the lead does not say \"{x['leads']}\": {row.lead[:200]}")
            else:
                row.message = row.lead
    if checks_ran:
        # Every failing check of the entry's lab, not only the one it names.
        for c in grade_labs(grade).get(lab, {}).get("checks", []):
            if c.get("verdict") in ("fail", "timeout", "crash", "error"):
                for p in message_problems(c):
                    row.fail(f"{c.get('id', '?')}: {p}")
    if x.get("speed_in_cpu_mode") and checks_ran:
        # A speed check counts only for a correct kernel: in CPU mode, the
        # correctness checks are what can be held against the entry.
        ids = [c for c in labs[lab]["checks"] if labs[lab]["kinds"][c] == "correctness"]
        bad = [labs[lab]["checks"][c] for c in ids if (find_check(grade, lab, c) or {}).get("verdict") != "pass"]
        if bad:
            row.fail(f"in CPU mode its correctness checks must pass; not: {'; '.join(bad)}")
        else:
            row.message = f"speed not run in CPU mode; {len(ids)} correctness checks pass"
    if row.state == "fail" and not row.message:
        row.message = first_line(lab_text)

    # Isolation: the known-good lab beside it is graded as if alone (unless the
    # grader refused the whole submission: then it was never unpacked).
    good = extra_lab(entry)
    if unreadable:
        if statuses[good] != "missing":
            row.fail(f"the grade says the submission is unreadable, yet the known-good {good} is {statuses[good]}")
    elif good in by_lab:
        g = by_lab[good]
        points, max_points, msg = g["points"], g["max_points"], g["message"]
        if gpu and (statuses[good] != "graded" or points != max_points):
            row.fail(f"isolation: the known-good {good} got {points:g} / {max_points:g} [{statuses[good]}] "
                     f"{first_line(msg)}")
        if mode == "cpu":
            for c, n in labs[good]["checks"].items():
                want = "pass" if labs[good]["kinds"][c] == "correctness" else "not_run"
                v = (find_check(grade, good, c) or {}).get("verdict", "")
                if statuses[good] != "graded" or v != want:
                    row.fail(f"isolation: the known-good {good}'s check '{n}' is {v or 'missing'} "
                             f"[{statuses[good]}], expected {want} in CPU mode")
        if mode == "none" and statuses[good] != "not_run":
            row.fail(f"isolation: the known-good {good} is {statuses[good]}, expected not_run: {first_line(msg)}")
    else:
        row.fail(f"isolation: grade.json has no lab {good}")

    # Archive members that tried to leave the unpacking folder were not written
    # (the grader unpacks into WORK_DIR/unpacked or WORK_DIR/slot-N/unpacked).
    if entry.get("archive") == "zip":
        unpack_dirs = [os.path.join(work, "unpacked")]
        if os.path.isdir(work):
            unpack_dirs += [os.path.join(work, d, "unpacked") for d in os.listdir(work) if d.startswith("slot-")]
        for c in entry.get("create", []):
            if ".." in c["path"].split("/"):
                for d in unpack_dirs:
                    escaped = os.path.normpath(os.path.join(d, c["path"]))
                    if os.path.exists(escaped):
                        row.fail(f"unpacking wrote {escaped}, outside the unpacking folder")
    check_never_says_and_time(row, x, grade, grade_text)
    return row


def check_never_says_and_time(row, x, grade, grade_text):
    """[expect] never_says: phrases (any case) that must appear nowhere in the
    submission's grade.json, of which every other result file is a view (in
    the JSON as written, and in its strings once unescaped); max_seconds: the
    grading's time (grade.json's seconds, to the whole second) may be no more."""
    texts = [("grade.json", grade_text), ("grade.json", json.dumps(grade, ensure_ascii=False))]
    for phrase in x.get("never_says", []):
        where = sorted({name for name, text in texts if contains(text, phrase)})
        if where:
            # Where it is, with a little on either side.
            text = next(text for name, text in texts if name == where[0] and contains(text, phrase))
            at = text.lower().find(phrase.lower())
            hit = " ".join(text[max(0, at - 40):at + len(phrase) + 60].split())
            row.fail(f"{' and '.join(where)} says \"{phrase}\": ...{hit}...")
    if "max_seconds" in x:
        seconds = grade.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            row.fail("grade.json has no seconds: cannot hold the grading to max_seconds")
        else:
            seconds = round(seconds)
            row.got += f" {seconds:g} s"
            if seconds > x["max_seconds"]:
                row.fail(f"its grading took {seconds:g} s (grade.json's seconds), more than "
                         f"{x['max_seconds']:g} s")


class Listener:
    """A Unix socket listening during the batch (an entry's `listen`): anyone on
    the machine may connect (mode 0777), and every connection is accepted, and
    what it sends kept, by a thread, so that a full backlog never blocks a
    check."""

    def __init__(self, path):
        self.path = path
        self.connections = []  # what each accepted connection sent (up to 200 bytes)
        if os.path.lexists(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise OSError(f"{path} exists and is not a socket")
            os.unlink(path)  # left by an earlier run
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o777)
        self.sock.listen(16)
        self.sock.setblocking(False)
        # It answers: the runner connects once itself (not counted), so that a
        # row without a connection means a check could not connect.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(path)
            try:
                self.sock.accept()[0].close()
            except BlockingIOError:
                raise OSError(f"{path} does not answer the runner's own connection")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def accept_all(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            with conn:
                conn.settimeout(0.5)
                data = b""
                try:
                    while len(data) < 200:
                        chunk = conn.recv(200 - len(data))
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
            self.connections.append(data)

    def serve(self):
        while not self.stop.wait(0.1):
            self.accept_all()

    def close(self):
        self.stop.set()
        self.thread.join()
        self.accept_all()  # one left in the backlog counts too
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def problem(self):
        if not self.connections:
            return ""
        sent = "; ".join(repr(d.decode(errors="replace")) for d in self.connections[:3])
        return (f"a check connected to the listener {self.path}: {len(self.connections)} connection(s), "
                f"which sent {sent}")


def unpacked_folders(work):
    """Every folder named `unpacked` under WORK_DIR (not looking inside them),
    with its inode and modification time: {path: (inode, mtime_ns)}."""
    found = {}
    for dirpath, dirnames, _ in os.walk(work):
        if "unpacked" in dirnames:
            path = os.path.join(dirpath, "unpacked")
            try:
                st = os.lstat(path)
                found[path] = (st.st_ino, st.st_mtime_ns)
            except OSError:
                pass
            dirnames.remove("unpacked")
    return found


def write_table(path, rows, labs, mode):
    """Each entry's expected check, verdict and lead against what it got, as Markdown."""
    def cell(text):
        return text.replace("|", "\\|").replace("\n", " ")[:230]
    with open(path, "w") as f:
        f.write("| entry | check | expected | got | expected cause | cause | expected lead | "
                "lead (what the student reads first) | row |\n"
                "|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            x = expectation(r.entry, labs, mode)
            want = "/".join(x["status"]) + (f" {x['verdict']}" if "verdict" in x else "")
            says = x.get("says", "")
            expected_lead = x.get("leads") or (says if isinstance(says, str) else says[0])
            problems = ": " + cell("; ".join(r.problems)) if r.problems else ""
            f.write(f"| {r.entry['name']} | {x.get('check', '')} | {cell(want)} | {cell(r.got)} | "
                    f"{x.get('cause', '')} | {r.cause} | "
                    f"{cell(expected_lead)} | {cell(r.lead or r.message)} | {r.state}{problems} |\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source_root")
    ap.add_argument("cudalab")
    ap.add_argument("work_dir")
    ap.add_argument("--host-only", action="store_true", help="do not submit the entries that need a GPU")
    ap.add_argument("--only", action="append", default=[], help="only entries whose name contains this")
    ap.add_argument("--require-gpu", action="store_true",
                    help="exit 77 (skipped) when there is no GPU and nothing else failed")
    ap.add_argument("--cpu", action="store_true",
                    help="grade every entry in CPU mode (cpu_mode = true, the GPU hidden), against [expect_cpu]")
    ap.add_argument("--keep", action="store_true", help="keep the batch and its results")
    ap.add_argument("--gpus", help="passed to cudalab grade --batch: grade on several GPUs at once")
    ap.add_argument("--table", help="also write the rows as a Markdown table to this file: each entry's "
                    "expected check, verdict and lead against what it got (the leads table)")
    a = ap.parse_args()
    if sum([a.host_only, a.require_gpu, a.cpu]) > 1:
        ap.error("--host-only, --require-gpu and --cpu exclude each other")
    src = os.path.abspath(a.source_root)
    cudalab = os.path.abspath(a.cudalab)
    work = os.path.abspath(a.work_dir)
    if a.require_gpu:
        # Skip at once without a GPU: the host-only run covers the rest, and
        # grading every entry only to find no GPU costs minutes.
        probe = os.path.join(os.path.dirname(os.path.dirname(cudalab)), "harness", "cudalab-gpuinfo")
        if not os.path.exists(probe) or subprocess.run([probe], capture_output=True).returncode == 77:
            print("gallery: no usable GPU; skipped (the Meson test 'gallery' grades every entry in CPU mode)")
            print("gallery: 0 passed, 0 failed, 0 skipped")
            return 77
    gallery = os.path.join(src, "tests", "gallery")
    labs = load_labs(src)

    entries = []
    try:
        everything = {}
        for name in sorted(os.listdir(gallery)):
            folder = os.path.join(gallery, name)
            if os.path.isfile(os.path.join(folder, "entry.toml")):
                everything[name] = load_entry(folder, labs)
        chosen = {n for n in everything if not a.only or any(o in n for o in a.only)}
        # An entry held against its twin brings the twin along (--only).
        while True:
            twins = {x["twin"] for n in chosen for x in (everything[n]["expect"], everything[n].get("expect_cpu", {}))
                     if "twin" in x} - chosen
            if not twins:
                break
            chosen |= twins
        entries = [everything[n] for n in sorted(chosen)]
    except (EntryError, tomllib.TOMLDecodeError) as e:
        print(f"gallery: {e}")
        print("gallery: 0 passed, 1 failed, 0 skipped")
        return 1
    submitted = [e for e in entries if not (a.host_only and e["gpu"])]

    tmp = tempfile.mkdtemp(prefix="cudalab-gallery-")
    batch, out = os.path.join(tmp, "batch"), os.path.join(tmp, "out")
    os.makedirs(batch)
    try:
        for e in submitted:
            write_submission(e, entry_items(e, src, labs), batch)
    except EntryError as e:
        print(f"gallery: {e}")
        print("gallery: 0 passed, 1 failed, 0 skipped")
        return 1
    course = os.path.join(tmp, "gallery-course.toml")
    with open(course, "w") as f:
        f.write("# The rogues' gallery's course: every lab, the grading seed, a short check timeout.\n"
                "[course]\ntitle = \"rogues' gallery\"\n"
                f"labs = [{', '.join(json.dumps(l) for l in labs)}]\n"
                f"[grading]\nseed = {SEED}\ncheck_timeout_s = {CHECK_TIMEOUT_S}\n"
                + ("cpu_mode = true\n" if a.cpu else ""))

    rc, log_path = None, os.path.join(tmp, "grade.log")
    # The entries' listeners (`listen`), for the batch's whole length.
    listeners = {}
    try:
        for e in submitted:
            if "listen" in e and e["listen"] not in listeners:
                listeners[e["listen"]] = Listener(e["listen"])
    except OSError as err:
        for l in listeners.values():
            l.close()
        print(f"gallery: cannot listen on {e['listen']}: {err}")
        print("gallery: 0 passed, 1 failed, 0 skipped")
        return 1
    unpacked_before = unpacked_folders(work)
    if submitted:
        argv = [cudalab, "grade", "--batch", batch, "--out", out, "--work-dir", work, "--course", course]
        # Without --cpu the verdicts are the GPU's: no provisional CPU-mode
        # grade where there is none (exit code 3, the entries built, not_run).
        if not a.cpu:
            argv.append("--no-cpu")
        if a.gpus:
            argv += ["--gpus", a.gpus]
        print(f"gallery: grading {len(submitted)} submissions ({len(entries) - len(submitted)} left out); "
              f"log: {log_path}", flush=True)
        with open(log_path, "w") as log:
            env = dict(os.environ)
            if a.cpu:
                env["CUDA_VISIBLE_DEVICES"] = ""  # CPU mode on a machine with a GPU too
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace", env=env)
            for line in p.stdout:
                log.write(line)
                if line.startswith("[") or "internal error" in line:
                    print("  " + line.rstrip()[:150], flush=True)
            rc = p.wait()
    for l in listeners.values():
        l.close()
    # The grader removes what it unpacked once a submission is graded: an
    # unpacked archive left in WORK_DIR is a student's files left on the
    # grading machine, and a zip bomb's contents left on its disk.
    # One that this batch did not touch (the same inode and time as before it)
    # was left by an earlier run, perhaps in a slot this batch did not use: a
    # note, not this grader's failure.
    run_problems, run_notes = [], []
    if submitted:
        for d, seen in sorted(unpacked_folders(work).items()):
            if unpacked_before.get(d) == seen:
                run_notes.append(f"{d} was left by an earlier run (this batch did not touch it): remove it")
            else:
                run_problems.append(f"{d} remains after grading: the grader must remove an unpacked submission")
    mode = "cpu" if rc == 0 and a.cpu else "gpu" if rc == 0 else "none"
    fatal = None
    if rc not in (None, 0, 3) or (a.cpu and rc == 3):
        with open(log_path, errors="replace") as f:
            tail = f.read()[-3000:]
        want = "0 in CPU mode" if a.cpu else "0 with a GPU, 3 without"
        fatal = f"cudalab grade exited {rc} (expected {want}):\n{tail}"

    rows = []
    for e in entries:
        if e not in submitted:
            r = Row(e)
            r.state, r.got, r.message = "skipped", "-", "skipped (needs a GPU; --host-only)"
        elif fatal:
            r = Row(e)
            r.got = "-"
            r.fail("cudalab grade failed")
        else:
            r = judge(e, out, labs, mode, src, work)
            if e.get("listen") in listeners and listeners[e["listen"]].problem():
                r.fail(listeners[e["listen"]].problem())
        rows.append(r)
    if not fatal:
        check_points_limits(rows, labs, mode)

    modes = {"gpu": "yes", "cpu": "hidden: CPU mode (cpu_mode = true, CUDA_VISIBLE_DEVICES=\"\")",
             "none": "none (cudalab exit code 3)" if rc == 3 else "-"}
    print(f"\nGPU: {modes[mode]}; seed {SEED}, check_timeout_s {CHECK_TIMEOUT_S}")
    w = max(len(r.entry["name"]) for r in rows) if rows else 10
    we = max([len(expected_text(expectation(r.entry, labs, mode))) for r in rows] + [8])
    wg = max([len(r.got) for r in rows] + [3])
    print(f"{'entry':<{w}}  {'expected':<{we}}  {'got':<{wg}}  message")
    for r in rows:
        mark = {"pass": "", "fail": "FAIL ", "skipped": ""}[r.state]
        x = expected_text(expectation(r.entry, labs, mode))
        print(f"{r.entry['name']:<{w}}  {x:<{we}}  {r.got:<{wg}}  {mark}{r.message[:110]}")
        for p in r.problems:
            print(f"{'':<{w}}    MISMATCH: {p}")
    if a.table:
        write_table(a.table, rows, labs, mode)
    if a.cpu:
        diffs = cpu_differences([r.entry for r in rows], labs)
        print(f"\nCPU mode against the GPU: {len(diffs)} of {len(rows)} entries expect something else")
        for e, g, c, why in diffs:
            print(f"  {e['name']}: GPU {expected_text(g)}; CPU mode {expected_text(c)}: {why}")
    if fatal:
        print(f"\n{fatal}")
    if run_problems or run_notes:
        print()
    for p in run_notes:
        print(f"gallery: note: {p}")
    for p in run_problems:
        print(f"gallery: FAIL {p}")
    passed = sum(r.state == "pass" for r in rows)
    failed = sum(r.state == "fail" for r in rows)
    skipped = sum(r.state == "skipped" for r in rows)
    if failed or fatal or run_problems or a.keep:
        print(f"\nbatch, results and log kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"gallery: {passed} passed, {failed} failed, {skipped} skipped"
          + (f"; {len(run_problems)} check(s) of the run failed" if run_problems else ""))
    if failed or fatal or run_problems:
        return 1
    return 77 if a.require_gpu and rc == 3 else 0


if __name__ == "__main__":
    sys.exit(main())
