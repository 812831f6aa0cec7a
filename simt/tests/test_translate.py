#!/usr/bin/env python3
"""The text simt_translate.py produces (test_translate.cu runs the result)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import simt_translate as st  # noqa: E402


def tr(text: str) -> str:
    body = st.translate(text, "k.cu", HERE)
    assert body.startswith('#line 1 "k.cu"\n')
    return body[len('#line 1 "k.cu"\n') :]


class Launches(unittest.TestCase):
    def test_simple(self):
        out = tr("void f(float* p) { k<<<g, b>>>(p, 3); }\n")
        self.assertIn('::simt::launch(::simt::Site{__FILE__, __LINE__, "k"}, ::simt::config(g, b), '
                      "::simt::kernel_address(k), [&](auto&&... simt_a_) { k(simt_a_...); }, p, 3)", out)
        self.assertNotIn("<<<", out)

    def test_lines_are_kept(self):
        src = "void f() {\n  k\n  <<<\n  g,\n  b\n  >>>\n  (\n  p\n  );\n  int here;\n}\n"
        out = tr(src)
        self.assertEqual(out.count("\n"), src.count("\n"))
        self.assertEqual(out.split("\n")[9].strip(), "int here;")

    def test_template_with_explicit_and_nested_arguments(self):
        out = tr("void f() { k<std::pair<int, int>, (N > 2)><<<dim3((n + 1) / 2), f(a, b)>>>(x); }")
        self.assertIn('"k<std::pair<int, int>, (N > 2)>"', out)
        self.assertIn("::simt::config(dim3((n + 1) / 2), f(a, b))", out)
        self.assertIn("::simt::kernel_address(k<std::pair<int, int>, (N > 2)>)", out)

    def test_deduced_template_has_no_address(self):
        out = tr("template <class T> __global__ void fill(T* p) {}\nvoid f(int* p) { fill<<<1, 1>>>(p); }")
        self.assertIn("nullptr, [&](auto&&... simt_a_) { fill(simt_a_...); }, p)", out)

    def test_shift_in_configuration(self):
        out = tr("void f() { k<<<(n >> 5) + 1, 32 >> 1>>>(p); }")
        self.assertIn("::simt::config((n >> 5) + 1, 32 >> 1)", out)

    def test_comments_and_strings_are_untouched(self):
        src = ('// k<<<1, 1>>>(p);\n/* k<<<1,1>>>(q); */\nconst char* s = "k<<<1, 1>>>(r);";\n'
               'const char* r = R"x(k<<<1,1>>>(s); __shared__ float t[4];)x";\nchar c = \'<\';\n')
        self.assertEqual(tr(src), src)

    def test_comments_inside_a_launch(self):
        out = tr("void f() { k /* a */ <<< /* >>> */ 1, 2 >>> /* ( */ ( /* ) */ p); }")
        self.assertIn("::simt::config( /* >>> */ 1, 2 )", out)
        self.assertIn("{ k(simt_a_...); },  /* ) */ p); }", out)

    def test_qualified_and_pointer(self):
        out = tr("void f() { ns::k<<<1, 1>>>(); ::g<<<1, 1>>>(); (*fp)<<<1, 1>>>(a); }")
        self.assertIn('"ns::k"', out)
        self.assertIn('"::g"', out)
        self.assertIn('"(*fp)"', out)
        self.assertIn("{ (*fp)(simt_a_...); }, a)", out)
        self.assertIn("{ ns::k(simt_a_...); })", out)

    def test_missing_arguments_is_an_error_with_a_line(self):
        with self.assertRaises(st.TranslateError) as e:
            tr("void f() {\n  k<<<1, 1>>>;\n}\n")
        self.assertIn("line 2", str(e.exception))


class Shared(unittest.TestCase):
    def test_static(self):
        out = tr("__global__ void k() {\n  __shared__ float tile[T][T + 1];\n}\n")
        self.assertIn("static auto& tile = ::simt::shared_var<float[T][T + 1]>();", out)

    def test_several_and_aligned(self):
        out = tr("void k() { __shared__ __align__(16) volatile float a[4], *p, b[2]; }")
        self.assertIn("static auto& a = ::simt::shared_var<volatile float[4]>(16);", out)
        self.assertIn("static auto& p = ::simt::shared_var<volatile float*>(16);", out)
        self.assertIn("static auto& b = ::simt::shared_var<volatile float[2]>(16);", out)

    def test_template_type(self):
        out = tr("void k() { __shared__ Pair<float, 2> s[8]; }")
        self.assertIn("static auto& s = ::simt::shared_var<Pair<float, 2>[8]>();", out)

    def test_extern(self):
        out = tr("void k() { extern __shared__ __align__(16) unsigned char smem[]; }")
        self.assertIn("unsigned char* const smem = static_cast<unsigned char*>(::simt::dynamic_shared_memory());",
                      out)

    def test_macro_definitions_are_left_to_the_fallback(self):
        src = "#define DECL __shared__ float s[4];\n"
        self.assertEqual(tr(src), src)


class Directives(unittest.TestCase):
    def test_pragma_unroll_is_removed(self):
        self.assertEqual(tr("  #pragma unroll\n  #pragma unroll 4\n#pragma once\n"), "\n\n#pragma once\n")

    def test_local_include_becomes_absolute(self):
        out = tr('#include "util.h"\n#include "nonexistent.h"\n#include <vector>\n')
        self.assertIn('#include "' + os.path.join(HERE, "util.h") + '"', out)
        self.assertIn('#include "nonexistent.h"', out)


class CommandLine(unittest.TestCase):
    def test_wrap(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "sol.cu")
            tmpl = os.path.join(d, "ref.cu.in")
            out = os.path.join(d, "out.cpp")
            with open(src, "w") as f:
                f.write("__global__ void k() {}\nvoid go() { k<<<1, 1>>>(); }\n")
            with open(tmpl, "w") as f:
                f.write('// from @SOURCE@\nnamespace ref {\n#include "@SOURCE@"\n}  // namespace ref\n')
            subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "simt_translate.py"), src,
                            "-o", out, "--wrap", tmpl], check=True)
            with open(out) as f:
                text = f.read()
            self.assertIn(f"// from {src}\nnamespace ref {{\n#line 1 \"{src}\"\n", text)
            self.assertIn("::simt::launch(", text)
            self.assertIn(f'#line 4 "{tmpl}"\n}}  // namespace ref', text)


class SavedAsEditorsSaveThem(unittest.TestCase):
    """A file nvcc accepts, CPU mode accepts: each translation compiles with g++."""

    KERNEL = "__global__ void k(float* p) {\n\tp[threadIdx.x] = 1;\n}\nvoid go(float* p) { k<<<1, 32>>>(p); }"

    def translate_and_compile(self, data: bytes) -> str:
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "sol.cu")
            out = os.path.join(d, "out.cpp")
            with open(src, "wb") as f:
                f.write(data)
            subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "simt_translate.py"), src, "-o", out],
                           check=True)
            with open(out, "rb") as f:
                text = f.read()
            simt = os.path.join(HERE, "..", "include")
            r = subprocess.run(["c++", "-std=c++17", "-fsyntax-only", "-I", simt, "-x", "c++", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return text

    def test_byte_order_mark(self):
        text = self.translate_and_compile(b"\xef\xbb\xbf" + self.KERNEL.encode() + b"\n")
        self.assertNotIn(b"\xef\xbb\xbf", text)

    def test_crlf_line_ends(self):
        text = self.translate_and_compile(self.KERNEL.replace("\n", "\r\n").encode() + b"\r\n")
        self.assertNotIn(b"\r", text)

    def test_no_newline_at_the_end_and_tabs(self):
        text = self.translate_and_compile(self.KERNEL.encode())
        self.assertTrue(text.endswith(b"\n"))
        self.assertIn(b"\tp[threadIdx.x]", text)

    def test_bytes_that_are_not_utf8_are_kept(self):
        text = self.translate_and_compile(b"// r\xe9sum\xe9 (Latin-1)\n" + self.KERNEL.encode() + b"\n")
        self.assertIn(b"r\xe9sum\xe9", text)


if __name__ == "__main__":
    unittest.main()
