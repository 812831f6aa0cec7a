#!/usr/bin/env python3
"""What a lab's test binary is built from (labs/meson.build), as ninja knows
it: the lab's own files, the harness, simt, and the solutions of the labs its
lab.toml names as references; never another lab's files, the framework's
tests or the handouts. A student's first `./cudalab test 03_tiling` builds
lab 03's binary and waits for all of it: a dependency on every lab would
make that wait several times longer. Host-only (ninja -t inputs reads
build.ninja), a second.

  test_lab_inputs.py SOURCE_ROOT BUILD_ROOT
"""
import os
import shutil
import subprocess
import sys
import tomllib
import unittest

SRC, BUILD = sys.argv.pop(1), sys.argv.pop(1)


def labs():
    root = os.path.join(SRC, "labs")
    return sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "lab.toml")))


def references(lab):
    with open(os.path.join(SRC, "labs", lab, "lab.toml"), "rb") as f:
        return tomllib.load(f)["lab"].get("references", [])


def targets_in_build():
    with open(os.path.join(BUILD, "build.ninja")) as f:
        return {line.split(":", 1)[0][len("build "):] for line in f if line.startswith("build labs/")}


def inputs(output):
    return subprocess.run(["ninja", "-C", BUILD, "-t", "inputs", output], capture_output=True, text=True,
                          check=True).stdout.split()


@unittest.skipUnless(shutil.which("ninja"), "no ninja on PATH")
class LabInputs(unittest.TestCase):
    def test_each_lab_binary_is_built_from_its_lab_and_its_references_only(self):
        known = targets_in_build()
        everyone = labs()
        checked = 0
        for lab in everyone:
            allowed = {lab, *references(lab)}
            for suffix in ("-tests", "-tests-cpu", "-tests-access"):
                output = "labs/" + lab + suffix
                if output not in known:
                    continue  # no nvcc: no GPU binary; no access build
                checked += 1
                ins = inputs(output)
                with self.subTest(output=output):
                    self.assertTrue(any(lab in i for i in ins), "%s is not built from lab %s" % (output, lab))
                    others = [i for i in ins if any(o in i for o in everyone if o not in allowed)]
                    self.assertEqual(others, [], "%s is built from other labs' files" % output)
                    framework = [i for i in ins if "/tests/" in i or i.startswith("tests/") or "handouts/" in i]
                    self.assertEqual(framework, [], "%s is built from the framework's tests" % output)
        self.assertGreater(checked, 0, "no lab binary in " + BUILD)

    def test_lab_03s_cpu_binary_has_lab_02s_solution_as_its_reference(self):
        ins = inputs("labs/03_tiling-tests-cpu")
        self.assertTrue(any(i.endswith("solutions/02_naive_matmul/matmul_naive.cu") for i in ins))
        self.assertTrue(any(i.endswith("labs/03_tiling/matmul_tiled.cu") for i in ins))


if __name__ == "__main__":
    unittest.main()
