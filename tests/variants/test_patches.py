#!/usr/bin/env python3
"""The known student files kept as patches (tools/variants.py, README.md here):
every patch of tests/variants/ and tests/gallery/ applies to its base and
makes a file unlike it, every gallery [[create]] from = names a file there is,
and the applier is strict where it must be (a hunk whose lines the base no
longer has is an error that names the patch, its base, the hunk and the line;
a hunk whose lines only moved applies, at an offset). Host-only, a second.

  test_patches.py SOURCE_ROOT
"""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv.pop(1))
spec = importlib.util.spec_from_file_location("variants", os.path.join(SRC, "tools", "variants.py"))
variants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(variants)

BASE = b"".join(b"line %d\n" % i for i in range(1, 31))


def run(*argv):
    """variants.py's main: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = variants.main(list(argv))
    return code, out.getvalue(), err.getvalue()


class TheTree(unittest.TestCase):
    def test_every_patch_applies_and_every_gallery_from_is_found(self):
        code, out, err = run("--root", SRC, "check")
        self.assertEqual(code, 0, out + err)
        self.assertIn(" 0 problem(s)", out)

    def test_every_made_file_differs_from_its_base_and_ends_in_a_newline(self):
        tree = variants.Tree(SRC)
        patches = tree.patches()
        self.assertGreater(len(patches), 40)
        for p in patches:
            made = tree.make(p)
            self.assertNotEqual(made, tree.read(tree.load(p).base), p)
            self.assertTrue(made.endswith(b"\n"), p)

    def test_a_variant_lab_file_is_either_whole_or_a_patch(self):
        tree = variants.Tree(SRC)
        for p in tree.patches():
            self.assertFalse(os.path.exists(tree.path(p[:-len(".patch")])), p)


class Applying(unittest.TestCase):
    """Patches in a small tree of their own."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.write("solutions/09_lab/k.cu", BASE)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def read(self, name):
        with open(os.path.join(self.root, name), "rb") as f:
            return f.read()

    def patch(self, target, base, edited):
        data = variants.diff(variants.Tree(self.root).read(base), edited, base, target)
        self.write(target + ".patch", data)
        return data

    def test_a_patch_makes_the_edited_file_byte_for_byte(self):
        for edited in (BASE.replace(b"line 12\n", b"line twelve\n"),
                       BASE + b"no newline at the end",
                       BASE[:-1],  # the base's last newline removed
                       BASE.replace(b"line 3\n", b"line 3\r\n"),
                       b"",
                       b"line 1\n" + BASE):
            self.patch("tests/variants/09_lab/v/k.cu", "solutions/09_lab/k.cu", edited)
            self.assertEqual(variants.Tree(self.root).make("tests/variants/09_lab/v/k.cu.patch"), edited)

    def test_a_hunk_the_base_no_longer_matches_is_an_error_naming_patch_base_hunk_and_line(self):
        self.patch("tests/variants/09_lab/v/k.cu", "solutions/09_lab/k.cu",
                   BASE.replace(b"line 5\n", b"LINE 5\n").replace(b"line 20\n", b"LINE 20\n"))
        self.write("solutions/09_lab/k.cu", BASE.replace(b"line 19\n", b"line nineteen\n"))
        with self.assertRaises(variants.PatchError) as e:
            variants.Tree(self.root).make("tests/variants/09_lab/v/k.cu.patch")
        msg = str(e.exception)
        for phrase in ("tests/variants/09_lab/v/k.cu.patch", "hunk 2 of 2 (@@ -17,7 +17,7 @@)",
                       "does not apply to solutions/09_lab/k.cu", "line 19 of the base: line nineteen",
                       "the hunk expects:    line 19"):
            self.assertIn(phrase, msg)
        code, out, _ = run("--root", self.root, "check")
        self.assertEqual(code, 1)
        self.assertIn("FAIL tests/variants/09_lab/v/k.cu.patch: hunk 2 of 2", out)

    def test_a_hunk_whose_lines_moved_applies_at_an_offset_and_check_notes_it(self):
        edited = BASE.replace(b"line 20\n", b"LINE 20\n")
        self.patch("tests/variants/09_lab/v/k.cu", "solutions/09_lab/k.cu", edited)
        self.write("solutions/09_lab/k.cu", b"new 1\nnew 2\n" + BASE)
        tree = variants.Tree(self.root)
        self.assertEqual(tree.make("tests/variants/09_lab/v/k.cu.patch"), b"new 1\nnew 2\n" + edited)
        self.assertEqual(tree.offsets["tests/variants/09_lab/v/k.cu.patch"], [2])
        code, out, _ = run("--root", self.root, "check")
        self.assertEqual(code, 0, out)
        self.assertIn("applies with offsets [2]", out)
        self.assertEqual(run("--root", self.root, "refresh")[0], 0)
        self.assertNotIn("offsets", run("--root", self.root, "check")[1])

    def test_a_patch_on_a_patch_applies_through_both_and_names_both_as_dependencies(self):
        first = BASE.replace(b"line 5\n", b"LINE 5\n")
        self.patch("tests/variants/09_lab/a/k.cu", "solutions/09_lab/k.cu", first)
        second = first.replace(b"line 25\n", b"LINE 25\n")
        self.patch("tests/gallery/70_x/k.cu", "tests/variants/09_lab/a/k.cu", second)
        tree = variants.Tree(self.root)
        self.assertEqual(tree.make("tests/gallery/70_x/k.cu.patch"), second)
        self.assertEqual(tree.deps("tests/gallery/70_x/k.cu.patch"),
                         ["tests/gallery/70_x/k.cu.patch", "tests/variants/09_lab/a/k.cu.patch",
                          "solutions/09_lab/k.cu"])

    def test_a_patch_must_name_the_file_beside_it_and_a_base_in_the_tree(self):
        data = self.patch("tests/variants/09_lab/v/k.cu", "solutions/09_lab/k.cu", BASE + b"x\n")
        self.write("tests/variants/09_lab/w/k.cu.patch", data)
        with self.assertRaisesRegex(variants.PatchError, "its \\+\\+\\+ line names tests/variants/09_lab/v/k.cu"):
            variants.Tree(self.root).make("tests/variants/09_lab/w/k.cu.patch")
        for base in (b"../outside.cu", b"/etc/passwd", b"solutions/09_lab/none.cu"):
            self.write("tests/variants/09_lab/v/k.cu.patch", data.replace(b"solutions/09_lab/k.cu", base, 1))
            with self.assertRaises(variants.PatchError):
                variants.Tree(self.root).make("tests/variants/09_lab/v/k.cu.patch")

    def test_bases_that_go_round_in_a_circle_are_an_error(self):
        for here, there in (("a", "b"), ("b", "a")):
            self.write(f"tests/variants/09_lab/{here}/k.cu.patch",
                       f"--- tests/variants/09_lab/{there}/k.cu\n+++ tests/variants/09_lab/{here}/k.cu\n".encode())
        with self.assertRaisesRegex(variants.PatchError, "go round in a circle"):
            variants.Tree(self.root).make("tests/variants/09_lab/a/k.cu.patch")

    def test_a_hunk_whose_lines_do_not_match_its_counts_is_an_error(self):
        data = self.patch("tests/variants/09_lab/v/k.cu", "solutions/09_lab/k.cu",
                          BASE.replace(b"line 5\n", b"LINE 5\n"))
        for broken, why in ((data.replace(b"@@ -2,7 +2,7 @@", b"@@ -2,9 +2,9 @@"), "cut short"),
                            (data.replace(b"@@ -2,7 +2,7 @@", b"@@ -2,5 +2,5 @@"), "expected a hunk"),
                            (data.replace(b" line 4\n", b"?line 4\n"), "not context")):
            self.write("tests/variants/09_lab/v/k.cu.patch", broken)
            with self.assertRaisesRegex(variants.PatchError, why):
                variants.Tree(self.root).make("tests/variants/09_lab/v/k.cu.patch")

    def test_edit_copies_the_solution_and_save_keeps_only_the_difference(self):
        self.write("tests/variants/09_lab/v/expect.toml", b'[expect]\nsquare = "fail"\n')
        target = os.path.join(self.root, "tests/variants/09_lab/v/k.cu")
        code, out, err = run("--root", self.root, "edit", target)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.read("tests/variants/09_lab/v/k.cu"), BASE)
        # Until saved, the check fails: both the file and its patch are there.
        self.assertIn("an edit not saved", run("--root", self.root, "check")[1])
        self.write("tests/variants/09_lab/v/k.cu", BASE.replace(b"line 7\n", b"the mistake\n"))
        code, out, err = run("--root", self.root, "save", target)
        self.assertEqual(code, 0, out + err)
        self.assertFalse(os.path.exists(target))
        patch = self.read("tests/variants/09_lab/v/k.cu.patch")
        self.assertTrue(patch.startswith(b"--- solutions/09_lab/k.cu\n+++ tests/variants/09_lab/v/k.cu\n"))
        self.assertIn(b"-line 7\n+the mistake\n", patch)
        # edit again: the file as the patch makes it; save: the same patch.
        self.assertEqual(run("--root", self.root, "edit", target)[0], 0)
        self.assertEqual(self.read("tests/variants/09_lab/v/k.cu"), BASE.replace(b"line 7\n", b"the mistake\n"))
        self.assertEqual(run("--root", self.root, "save", target)[0], 0)
        self.assertEqual(self.read("tests/variants/09_lab/v/k.cu.patch"), patch)

    def test_a_skeleton_variant_starts_from_the_skeleton(self):
        self.write("labs/09_lab/k.cu", b"skeleton\n")
        self.write("tests/variants/09_lab/s/expect.toml", b'base = "labs"\n[expect]\nsquare = "fail"\n')
        code, _, err = run("--root", self.root, "edit", os.path.join(self.root, "tests/variants/09_lab/s/k.cu"))
        self.assertEqual(code, 0, err)
        self.assertEqual(self.read("tests/variants/09_lab/s/k.cu"), b"skeleton\n")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
