#!/usr/bin/env python3
"""`cudalab calibrate` without a GPU: its dry run reads records fabricated
here (as the variants' test binaries write them on a GPU), prints the table
and the proposal, and with --write records the calibrated checks in the GPU's
table (calibration/<gpu>.toml, here in a folder of its own) and edits copies
of two lab.toml files (only the numbers change; a second run changes
nothing more); lab 04's foil is made too close to the reference, so that
check "cannot be met" (exit code 1): its file stays as it was and the table
has no entry for it. Then the real command with the GPU hidden
(CUDA_VISIBLE_DEVICES="") must say that calibration needs a GPU and exit 3.
Host-only, a few seconds.

  test_calibrate.py SOURCE_ROOT CUDALAB_BINARY WORK_DIR
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, finish  # noqa: E402

SRC, CUDALAB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
LABS = ["01_coalescing", "04_transpose"]
GPU = "Test GPU 80GB (sm_90, 132 SMs, 3352 GB/s peak DRAM, 50 MB L2, driver 13.0, runtime 13.0)"
# Made-up ratios (three runs each); a variant not named here: 1.0 if correct, 0.3 if a foil.
RATIOS = {
    ("vector-speed", "solution"): [1.000, 1.002, 0.998],
    ("vector-speed", "grid_stride"): [1.010, 1.012, 1.008],
    ("vector-speed", "float4"): [1.11, 1.10, 1.11],
    ("vector-speed", "chunked"): [0.074, 0.075, None],  # run 3 recorded no ratio
    ("matrix-speed", "solution"): [1.000, 1.001, 1.008],
    ("matrix-speed", "blocks_16x16"): [0.965, 0.966, 0.964],
    ("matrix-speed", "swapped"): [0.250, 0.251, 0.250],
    ("matrix-speed", "swapped_16x16"): [0.63, 0.62, 0.63],
    ("speed", "solution"): [0.999, 1.000, 0.998],
    ("speed", "no_padding"): [0.95, 0.94, 0.95],  # too close: the rules cannot be met
}


def run(args, env=None):
    p = subprocess.run([CUDALAB, "calibrate", *args], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


shutil.rmtree(WORK, ignore_errors=True)
labs_dir = os.path.join(WORK, "labs")
records = os.path.join(WORK, "records")
for lab in LABS:
    os.makedirs(os.path.join(labs_dir, lab))
    shutil.copy(os.path.join(SRC, "labs", lab, "lab.toml"), os.path.join(labs_dir, lab, "lab.toml"))
    with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
        manifest = tomllib.load(f)
    vdir = os.path.join(SRC, "tests", "variants", lab)
    for v in sorted(os.listdir(vdir)):
        with open(os.path.join(vdir, v, "expect.toml"), "rb") as f:
            expect = tomllib.load(f).get("expect", {})
        for c in manifest["check"]:
            e = expect.get(c["id"])
            verdict = e if isinstance(e, str) else (e or {}).get("verdict")
            if c["kind"] != "speed" or verdict not in ("pass", "fail"):
                continue
            ratios = RATIOS.get((c["id"], v), [1.0, 1.0, 1.0] if verdict == "pass" else [0.3, 0.3, 0.3])
            for n, r in enumerate(ratios, 1):
                ms = [] if r is None else [{"key": "ratio", "value": r, "unit": "x"},
                                           {"key": "noise", "value": 0.12, "unit": "%"}]
                rec = {"format": "cudalab-record/1", "lab": lab, "seed": "1", "gpu": GPU, "mode": "gpu",
                       "checks": [{"name": c["name"], "verdict": verdict if r is not None else "fail",
                                   "failures": [] if r is not None else ["speed not measured: made up here"],
                                   "notes": [], "measurements": ms}]}
                path = os.path.join(records, lab, c["id"], f"{v}-{n}.json")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    json.dump(rec, f)

# The fixture: matrix-speed's credit as it was before the course's own
# calibration (0.40 to 0.90, which gives points to the swapped_16x16 foil), so
# that this test does not move with the numbers the labs ship.
with open(os.path.join(labs_dir, "01_coalescing", "lab.toml")) as f:
    text = f.read()
shipped = re.findall(r"credit = \{ zero_at = [0-9.]+, full_at = [0-9.]+ \}", text)
assert len(shipped) == 2, shipped
at = text.index('id = "matrix-speed"')
text = text[:at] + text[at:].replace(shipped[1], "credit = { zero_at = 0.40, full_at = 0.90 }", 1)
with open(os.path.join(labs_dir, "01_coalescing", "lab.toml"), "w") as f:
    f.write(text)

# What a real run writes beside the records: the GPU, the day it was timed and
# the nvcc that built the binaries.
with open(os.path.join(records, "calibration.json"), "w") as f:
    json.dump({"gpu": "Test GPU 80GB (sm_90)", "date": "2026-01-02", "runs": 3, "nvcc": "13.0.88"}, f)
tables = os.path.join(WORK, "calibration")
table_file = os.path.join(tables, "test-gpu-80gb-sm90.toml")

originals = {lab: open(os.path.join(labs_dir, lab, "lab.toml")).read() for lab in LABS}

# The dry run: the table and the proposal, no file changed.
rc, out, err = run([*LABS, "--from-records", records, "--labs-dir", labs_dir])
print(out, err)
check(rc == 1, f"a check that cannot be met: exit code 1, got {rc}")
check("dry run: reading the records" in out, "says it is a dry run")
check("measured on Test GPU 80GB (sm_90), 2026-01-02" in out, "says when the records were measured")
check(re.search(r"01_coalescing / vector-speed: now min_ratio 0\.85, credit 0\.30 to 0\.90", out), "vector-speed header")
check(re.search(r"solution\s+reference\s+1\.000 \(0\.998-1\.002\) \[3 runs\]\s+0\.12%\s+pass", out), "solution's row")
check(re.search(r"chunked\s+foil\s+0\.074 \(0\.074-0\.075\) \[2 runs\]", out), "chunked's row: two runs with a ratio")
check("chunked: 1 of 3 runs recorded no ratio (speed not measured: made up here)" in out, "the run without a ratio")
check("proposal: min_ratio 0.85 (unchanged), credit 0.30 to 0.90 (unchanged)" in out, "vector-speed kept")
check("proposal: min_ratio 0.80 (unchanged), credit 0.65 to 0.90 (was 0.40 to 0.90)" in out,
      "matrix-speed: no credit at or below the fastest foil (swapped_16x16, 0.63)")
check(re.search(r"NOT CALIBRATED: cannot be met on this GPU: the foil no_padding \(0\.950\) is too close to the "
                r"correct alternative solution \(0\.998\)", out), "lab 04: cannot be met, says which")
check(re.search(r"04_transpose\s+speed\s+0\.999\s+none: cannot be met on this GPU", out), "summary row for lab 04")
check("Test GPU 80GB (sm_90)" in out, "names the records' GPU")
check(all(open(os.path.join(labs_dir, lab, "lab.toml")).read() == originals[lab] for lab in LABS),
      "no file changed without --write")
check(not os.path.exists(tables), "no table written without --write")

# --write: the GPU's table, and in lab.toml only the numbers.
write_args = [*LABS, "--from-records", records, "--labs-dir", labs_dir, "--tables-dir", tables, "--write"]
rc, out, err = run(write_args)
print(out, err)
check(rc == 1, f"--write: exit code 1 (lab 04 not calibrated), got {rc}")
after = {lab: open(os.path.join(labs_dir, lab, "lab.toml")).read() for lab in LABS}
check(after["04_transpose"] == originals["04_transpose"], "lab 04's file unchanged: nothing proposed")
diff = [l for l in difflib.ndiff(originals["01_coalescing"].splitlines(), after["01_coalescing"].splitlines())
        if l[:1] in "+-"]
added = [l[2:] for l in diff if l.startswith("+ ")]
removed = [l[2:] for l in diff if l.startswith("- ")]
check(removed == ["credit = { zero_at = 0.40, full_at = 0.90 }"], f"only matrix-speed's credit line changed: {removed}")
check(added == ["credit = { zero_at = 0.65, full_at = 0.90 }"], f"added: {added}")
check(f"wrote {table_file}" in out, f"says it wrote the GPU's table {table_file}")
check(os.path.isfile(table_file), "the table is named after the GPU and its compute capability")
table = tomllib.load(open(table_file, "rb")) if os.path.isfile(table_file) else {}
check(table.get("gpu") == {"name": "Test GPU 80GB", "sm": "sm_90"}, f"the table's GPU: {table.get('gpu')}")
entries = {(c["lab"], c["id"]): c for c in table.get("check", [])}
check(sorted(entries) == [("01_coalescing", "matrix-speed"), ("01_coalescing", "vector-speed")],
      f"an entry per calibrated check, none for lab 04's: {sorted(entries)}")
matrix = entries.get(("01_coalescing", "matrix-speed"), {})
check(matrix.get("date") == "2026-01-02" and matrix.get("runs") == 3 and matrix.get("nvcc") == "13.0.88",
      f"when, how many runs, which nvcc: {matrix.get('date')}, {matrix.get('runs')}, {matrix.get('nvcc')}")
check(matrix.get("device") == GPU, f"the records' GPU line: {matrix.get('device')}")
check(matrix.get("min_ratio") == 0.80 and matrix.get("credit") == {"zero_at": 0.65, "full_at": 0.90},
      f"the derived thresholds: {matrix.get('min_ratio')}, {matrix.get('credit')}")
check(matrix.get("margins") == {"correct": 0.10, "foil": 0.10, "full_credit": 0.05}, "the margins")
check(matrix.get("allowed_min_ratio") == [0.700, 0.868], f"the range allowed: {matrix.get('allowed_min_ratio')}")
variants = {v["name"]: v for v in matrix.get("variants", [])}
check(variants.get("swapped_16x16") == {"name": "swapped_16x16", "expect": "fail", "median": 0.63,
                                        "ratios": [0.63, 0.62, 0.63], "max_noise_pct": 0.12},
      f"a foil's ratios: {variants.get('swapped_16x16')}")
check(variants.get("solution", {}).get("expect") == "pass", "the reference must pass")
vector = entries.get(("01_coalescing", "vector-speed"), {})
chunked = {v["name"]: v for v in vector.get("variants", [])}.get("chunked", {})
check(chunked.get("ratios") == [0.074, 0.075], f"the runs with a ratio: {chunked}")
# The records' folder, named from the source tree where it lies inside it.
named = os.path.relpath(os.path.realpath(records), os.path.realpath(SRC))
named = os.path.realpath(records) if named.startswith("..") else named
check(vector.get("source", "").endswith(f"the records in {named}"), f"where the measurements are: {vector.get('source')}")
written = open(table_file).read() if os.path.isfile(table_file) else ""

rc, out, err = run(write_args)
again = open(os.path.join(labs_dir, "01_coalescing", "lab.toml")).read()
check(again == after["01_coalescing"], "a second --write changes no lab.toml")
check(os.path.isfile(table_file) and open(table_file).read() == written,
      "a second --write gives the same table (entries replaced, not repeated)")

# Usage errors.
rc, out, err = run(["99_nope", "--from-records", records, "--labs-dir", labs_dir])
check(rc == 2 and "cannot open the lab manifest" in err, f"an unknown lab: exit 2, got {rc}: {err}")

# Without a GPU: the clear message and exit code 3.
rc, out, err = run(["04_transpose", "--no-build"], env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
print(out, err)
check(rc == 3, f"no GPU: exit code 3, got {rc}")
check("calibration needs a GPU" in err, "no GPU: says calibration needs one")

finish()
