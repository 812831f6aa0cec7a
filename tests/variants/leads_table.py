#!/usr/bin/env python3
"""Every failing check of the variants with its lead, as a Markdown table.

  leads_table.py BUILD_DIR [--out FILE]

Reads BUILD_DIR/meson-logs/testlog.json after `meson test` ran the variants
(`cudalab expect`, one test per variant and mode) and, for each check a
variant expects to fail or that failed, prints: the variant, the mode, the
check, the verdict expected and got, the cause id expected (`cause`) and the
one its diagnosis named, the lead its expect.toml names
(`leads`), the lead the check printed (grader/authoring/expect.h's leading_line: the
"Diagnosis:" line, else the message's first line), and the test's result.
A variant test already fails when its lead does not say `leads` or a check
shows two causes; this table is the record of what each one said.
Exit code 1 when a variant test in the log failed, else 0.
"""
import argparse
import json
import os
import re
import sys
import tomllib

ROW = re.compile(r"^(?P<check>[\w-]+)\s+(?P<expected>\w+)\s+(?P<got>\w+)\s+(?P<message>.*)$")


def expectations(variants_dir, variant, cpu):
    """check -> (verdict, leads) from the variant's expect.toml, [expect_cpu] over [expect] in CPU mode."""
    with open(os.path.join(variants_dir, variant, "expect.toml"), "rb") as f:
        doc = tomllib.load(f)
    out = {}
    for section in ("expect", "expect_cpu") if cpu else ("expect",):
        for check, v in doc.get(section, {}).items():
            v = {"verdict": v} if isinstance(v, str) else v
            out[check] = (v.get("verdict", ""), v.get("leads", ""), v.get("cause", ""))
    return out


def cell(text, width=220):
    return text.replace("|", "\\|")[:width]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--out", help="write the table here (default: standard output)")
    a = ap.parse_args()
    variants_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)))
    lines = ["| variant | mode | check | expected | got | expected cause | cause | expected lead | "
             "lead (what the student reads first) | test |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    failed = 0
    with open(os.path.join(a.build_dir, "meson-logs", "testlog.json")) as f:
        tests = [json.loads(l) for l in f if l.strip()]
    for t in sorted(tests, key=lambda t: t["name"]):
        # "cudalab:03_tiling+cpu / 03_tiling/missing_first_sync (CPU mode)" (Meson 1.0),
        # "03_tiling+gpu - cudalab:03_tiling/missing_first_sync" (Meson 1.12)
        m = re.search(r"[:/ ](\d\d_\w+/\w+)( \(CPU mode\))?$", t["name"])
        if not m or not os.path.isfile(os.path.join(variants_dir, m.group(1), "expect.toml")):
            continue
        variant, cpu = m.group(1), bool(m.group(2))
        result = t.get("result", "")
        failed += result not in ("OK", "SKIP", "EXPECTEDFAIL")
        expected = expectations(variants_dir, variant, cpu)
        for line in t.get("stdout", "").split("\n"):
            r = ROW.match(line)
            if not r or r["check"] == "check" or r["check"] not in expected:
                continue
            if r["expected"] == r["got"] and r["got"] in ("pass", "not_run"):
                continue
            message = r["message"].removeprefix("MISMATCH: ")
            cause = ""
            if c := re.match(r"^\[(\w+)\] ", message):
                cause, message = c.group(1), message[c.end():]
            lines.append(f"| {variant} | {'CPU' if cpu else 'GPU'} | {r['check']} | {r['expected']} | {r['got']} | "
                         f"{expected[r['check']][2]} | {cause} | "
                         f"{cell(expected[r['check']][1])} | {cell(message)} | {result} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print(f"{len(lines) - 2} failing checks; {failed} variant tests failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
