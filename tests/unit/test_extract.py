#!/usr/bin/env python3
"""tools/extract.py's bounds where no real archive reaches them: bytes counted
as they are written (a member with more data than its header declares, a
total passed mid-member, and what was written deleted), a decompressed tar
stream bounded on seek and on read, names checked at their limits and printed
on one line, any failure as one line and exit 2, and the defaults equal to
grader/run/submission.h's constants. The C++ unit tests (test_submission.cpp,
[archive]) unpack real bombs through the grader. Host-only, a second.

  test_extract.py SOURCE_ROOT
"""
import contextlib
import gzip
import importlib.util
import io
import os
import re
import sys
import tempfile
import unittest

SRC = sys.argv.pop(1)
spec = importlib.util.spec_from_file_location("extract", os.path.join(SRC, "tools", "extract.py"))
extract = importlib.util.module_from_spec(spec)
spec.loader.exec_module(extract)
MiB = 1 << 20


class Writing(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dest = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_more_data_than_declared_is_cut_off_and_removed(self):
        out = extract.Output(self.dest, 64 * MiB, 10 * MiB)
        reason = out.write(os.path.join("a", "f.cu"), iter([b"x" * 100, b"y" * 100]), 150)
        self.assertEqual(reason, "more data than the 150 bytes its header declares")
        self.assertFalse(os.path.exists(os.path.join(self.dest, "a", "f.cu")))
        self.assertEqual(out.total, 100)  # what was written still counts

    def test_the_total_is_counted_as_written_and_everything_written_deleted(self):
        out = extract.Output(self.dest, 3 * MiB, 10 * MiB)
        self.assertIsNone(out.write(os.path.join("d", "one"), iter([bytes(MiB)] * 2), 2 * MiB))
        with self.assertRaises(extract.Refused) as refused:
            out.write(os.path.join("e", "f", "two"), iter([bytes(MiB)] * 2), 2 * MiB)  # passed mid-member
        self.assertEqual(str(refused.exception),
                         "the archive unpacks to more than 3 MiB (a submission may unpack to at most 3 MiB)")
        out.remove_all()
        self.assertEqual(os.listdir(self.dest), [])

    def test_a_file_where_a_folder_is_is_skipped(self):
        out = extract.Output(self.dest, MiB, MiB)
        self.assertIsNone(out.write("a", iter([b"1"]), 1))
        self.assertEqual(out.write(os.path.join("a", "b"), iter([b"2"]), 1), "a file and a folder with the same name")


class Streams(unittest.TestCase):
    def gz(self, size):
        return gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(bytes(size))), mode="rb")

    def test_a_decompressed_stream_is_bounded_on_seek_and_read(self):
        with self.assertRaises(extract.Refused):
            extract.Bounded(self.gz(10 * MiB), MiB, True, "too big").seek(5 * MiB)
        with self.assertRaises(extract.Refused):
            extract.Bounded(self.gz(10 * MiB), MiB, True, "too big").read()
        s = extract.Bounded(self.gz(MiB), MiB, True, "too big")
        self.assertEqual(len(s.read()), MiB)  # exactly the cap is fine
        s.seek(10 * MiB)  # past the end of a short stream: no refusal
        self.assertEqual(s.read(10), b"")

    def test_a_plain_file_is_bounded_on_what_is_read(self):
        s = extract.Bounded(io.BytesIO(bytes(10 * MiB)), MiB, False, "too big")
        s.seek(8 * MiB)  # seeking reads nothing
        self.assertEqual(len(s.read(MiB)), MiB)
        with self.assertRaises(extract.Refused):
            s.read(1)


class Names(unittest.TestCase):
    def test_limits(self):
        ok = lambda name: extract.checked_name(name, 16)[1]
        self.assertIsNone(ok("/".join(["d"] * 16) + "/f.cu"))
        self.assertEqual(ok("/".join(["d"] * 17) + "/f.cu"), "deeper than 16 folders")
        self.assertIsNone(ok("x" * 255))
        self.assertEqual(ok("x" * 256), "name too long")
        self.assertEqual(ok("/".join(["x" * 200] * 6)), "name too long")  # 1205 bytes
        self.assertEqual(ok("a\0b"), "name with control characters")
        self.assertEqual(ok("a\x9bb"), "name with control characters")
        self.assertEqual(ok("/etc/passwd"), "unsafe path")
        self.assertEqual(ok("a\\..\\..\\b"), "unsafe path")
        self.assertEqual(extract.checked_name("./a//b.cu", 16)[0], os.path.join("a", "b.cu"))

    def test_printed_on_one_line_and_cut(self):
        self.assertEqual(extract.shown("a\tb\nc\u00e9"), "a\\x09b\\x0ac\\xc3\\xa9")
        self.assertEqual(extract.shown("x" * 300), "x" * 200 + "...")
        self.assertEqual(extract.shown("\n" * 100), "\\x0a" * 50 + "...")


class Main(unittest.TestCase):
    def run_main(self, *args):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = extract.main(["extract.py", *args])
        return code, err.getvalue()

    def test_any_failure_is_one_line_and_exit_2(self):
        def boom(*_):
            raise ValueError("boom\nTraceback (most recent call last)")
        saved, extract.unpack_tar = extract.unpack_tar, boom
        try:
            with tempfile.TemporaryDirectory() as tmp:
                code, err = self.run_main(os.path.join(tmp, "a.tar"), os.path.join(tmp, "out"))
        finally:
            extract.unpack_tar = saved
        self.assertEqual(code, 2)
        self.assertEqual(err.count("\n"), 1)
        self.assertTrue(err.startswith("the archive cannot be unpacked (ValueError: boom\\x0aTraceback"), err)

    def test_a_missing_archive_names_no_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            code, err = self.run_main(os.path.join(tmp, "gone.tar"), os.path.join(tmp, "out"))
        self.assertEqual((code, err), (2, "the archive cannot be read (No such file or directory)\n"))


class Defaults(unittest.TestCase):
    def test_equal_the_graders_constants(self):
        with open(os.path.join(SRC, "grader", "run", "submission.h")) as f:
            header = f.read()

        def constant(name):
            m = re.search(name + r" = ([0-9]+)(?: << ([0-9]+))?;", header)
            self.assertIsNotNone(m, name)
            return int(m.group(1)) << int(m.group(2) or 0)

        self.assertEqual(extract.MAX_MEMBERS, constant("kMaxArchiveMembers"))
        self.assertEqual(extract.MAX_TOTAL_BYTES, constant("kMaxArchiveBytes"))
        self.assertEqual(extract.MAX_FILE_BYTES, constant("kMaxArchiveMemberBytes"))
        self.assertEqual(extract.MAX_RATIO, constant("kMaxArchiveRatio"))
        self.assertEqual(extract.MAX_DEPTH, constant("kMaxArchiveDepth"))


if __name__ == "__main__":
    unittest.main()
