#!/usr/bin/env python3
"""report.html and a batch's index.html in a real browser: the unit tests
write a page with a speed check's roofline (made-up results,
CUDALAB_REPORT_OUT), that roofline alone (CUDALAB_ROOFLINE_OUT: a tiled
kernel and the naive one, each at the traffic CPU mode counted) and a batch
page with its histogram and class view (testbed::class_batch(),
CUDALAB_INDEX_OUT); Debian's headless Chromium screenshots each (report.png,
roofline.png, index.png in WORK_DIR, to look at), and they must show what
matters: the student's point in its red and the roof's dark line; the
student's tiled kernel right of the naive one; the histogram's blue bars
and the class view's orange share bars.
Exit 77 (skipped) where Chromium is not installed.

    python3 tests/report/check_in_browser.py UNIT_TESTS_BINARY WORK_DIR
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib


def read_png(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"PNG depth {depth} color type {color}"
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                cur[i] = (cur[i] + a) & 255
            elif kind == 2:
                cur[i] = (cur[i] + b) & 255
            elif kind == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(cur[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = cur
    return width, height, rows


def near(px, rgb, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(px, rgb))


def main():
    unit, work = sys.argv[1], sys.argv[2]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("report in a browser: skipped (no chromium installed; Debian: apt-get install chromium)")
        return 77
    os.makedirs(work, exist_ok=True)
    page, shot = os.path.join(work, "report.html"), os.path.join(work, "report.png")
    index, index_shot = os.path.join(work, "index.html"), os.path.join(work, "index.png")
    roof, roof_shot = os.path.join(work, "roofline.html"), os.path.join(work, "roofline.png")
    for f in (page, shot, index, index_shot, roof, roof_shot):
        if os.path.exists(f):
            os.remove(f)
    env = dict(os.environ, CUDALAB_REPORT_OUT=page, CUDALAB_INDEX_OUT=index, CUDALAB_ROOFLINE_OUT=roof)
    for case in ("report.html for the browser test is written where it is asked for",
                 "index.html for the browser test is written where it is asked for",
                 "the roofline for the browser test is written where it is asked for"):
        subprocess.run([unit, case], env=env, check=True, stdout=subprocess.DEVNULL)

    def screenshot(html, png, height):
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size=1000,{height}", f"--screenshot={png}", "file://" + os.path.abspath(html)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        return read_png(png)

    width, height, rows = screenshot(page, shot, 1400)
    # The student's colour, tightly (the failed check's badge is another red).
    red = [(x, y) for y in range(height) for x in range(width) if near(rows[y][x], (0xd6, 0x27, 0x28), 12)]
    # The FP32 roof: a horizontal dark line hundreds of pixels long; text never makes such a run.
    longest = 0
    for y in range(height):
        run = 0
        for x in range(width):
            run = run + 1 if near(rows[y][x], (0x33, 0x33, 0x33), 30) else 0
            longest = max(longest, run)
    print(f"screenshot {width}x{height}: {len(red)} pixels of the student's red, "
          f"longest dark horizontal line {longest} px")
    problems = []
    # The student's mark (a 7-px circle) and its legend dot.
    if len(red) < 60:
        problems.append("the student's point is not on the page")
    if longest < 100:
        problems.append("the roofline's FP32 ceiling is not drawn")

    # The roofline alone: the student's ring (red) and the naive kernel's
    # dot (blue) are the only marks of their colours in its plot, which
    # starts 70 px into the chart (the legend's marks stand left of that).
    width, height, rows = screenshot(roof, roof_shot, 600)

    def centre(rgb):
        xs = [x for y in range(height) for x in range(100, width) if near(rows[y][x], rgb, 12)]
        return (sum(xs) / len(xs), len(xs)) if xs else (None, 0)

    (ring_x, ring_n), (naive_x, naive_n) = centre((0xd6, 0x27, 0x28)), centre((0x1f, 0x77, 0xb4))
    print(f"roofline screenshot {width}x{height}: the student's ring at x {ring_x} ({ring_n} px), "
          f"the naive kernel's dot at x {naive_x} ({naive_n} px)")
    if ring_n < 30 or naive_n < 30:
        problems.append("the roofline's two kernels are not both on the page")
    elif ring_x < naive_x + 100:
        # 3.76 against 0.50 FLOP/B: 0.88 of a decade, about 170 px of its 4 decades.
        problems.append("the tiled kernel does not stand right of the naive one on the roofline")

    width, height, rows = screenshot(index, index_shot, 1200)
    blue = sum(1 for y in range(height) for x in range(width) if near(rows[y][x], (0x1f, 0x77, 0xb4), 12))
    orange = sum(1 for y in range(height) for x in range(width) if near(rows[y][x], (0xe0, 0x7b, 0x39), 12))
    print(f"index screenshot {width}x{height}: {blue} pixels of the histogram's blue, "
          f"{orange} of the class view's share bars")
    # Six submissions in four bins of a 550-px wide, 150-px high plot: thousands of pixels.
    if blue < 2000:
        problems.append("the histogram's bars are not on the batch page")
    # Three share bars (50%, 25%, 2 of 6 not graded), 10 px high.
    if orange < 300:
        problems.append("the class view's share bars are not on the batch page")
    for p in problems:
        print("FAIL:", p)
    print("report in a browser: " + ("ok" if not problems else "FAILED") + f" ({shot}, {roof_shot}, {index_shot})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
