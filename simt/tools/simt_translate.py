#!/usr/bin/env python3
"""simt_translate.py: turns a CUDA .cu file into C++ for cudalab's CPU mode.

    simt_translate.py INPUT.cu -o OUTPUT.cpp [--wrap TEMPLATE] [--name SHOWN]

What it rewrites (everything else is left as written, byte for byte):

  kernel<<<grid, block[, smem[, stream]]>>>(args)
      -> ::simt::launch(::simt::Site{__FILE__, __LINE__, "kernel"},
             ::simt::config(grid, block[, smem[, stream]]), <kernel address>,
             [&](auto&&... simt_a_) { kernel(simt_a_...); }, args)
      The kernel may be qualified (ns::k), a template (k<T, 4>, k<decltype(x)>),
      or parenthesised ((*ptr)); the configuration and the arguments may hold
      nested parentheses, templates, >> and comments, and span lines.
  __shared__ T name[N][M];  (static shared memory, inside a kernel or not)
      -> static auto& name = ::simt::shared_var<T[N][M]>();
  extern __shared__ T name[];  (dynamic shared memory)
      -> T* const name = static_cast<T*>(::simt::dynamic_shared_memory());
  #pragma unroll [N]  -> removed (GCC would warn about it)
  #include "local.cuh"  -> the absolute path, when the file is next to INPUT
      (the output lives in the build folder)

Text in comments, string and character literals (raw strings too) is never
touched. Line breaks are kept where they were and the output starts with
`#line 1 "INPUT"`, so compiler messages, __FILE__, __LINE__ and the debug
information name the student's file and lines.

--wrap TEMPLATE: the output is TEMPLATE with its line `#include "@SOURCE@"`
replaced by the translated INPUT and any other @SOURCE@ by INPUT's path
(cudalab's tools/reference.cu.in, which puts a solution in namespace ref).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IDENT_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


class TranslateError(Exception):
    pass


def code_mask(text: str) -> tuple[bytearray, bytearray]:
    """Per character: 1 where it is code (not a comment or literal); and 1
    where it lies on a preprocessor directive line."""
    n = len(text)
    code = bytearray(n)
    directive = bytearray(n)
    i = 0
    line_start = True  # only whitespace since the last (unescaped) newline
    in_directive = False
    while i < n:
        c = text[i]
        if c == "\n":
            # A directive ends at a newline not escaped by a backslash.
            if in_directive and not (i > 0 and text[i - 1] == "\\"):
                in_directive = False
            code[i] = 1
            directive[i] = in_directive
            line_start = not in_directive
            i += 1
            continue
        if line_start and c == "#":
            in_directive = True
        if not c.isspace():
            line_start = False
        directive[i] = in_directive
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            # A line comment continued by a backslash goes on.
            while j < n and j > 0 and text[j - 1] == "\\":
                k = text.find("\n", j + 1)
                j = n if k < 0 else k
            for k in range(i, j):
                directive[k] = in_directive
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                directive[k] = in_directive
            i = j
            continue
        if c == '"':
            # Raw string? The token before the quote is R, u8R, uR, UR or LR.
            k = i
            while k > 0 and text[k - 1] in IDENT_CHARS:
                k -= 1
            prefix = text[k:i]
            if prefix in ("R", "u8R", "uR", "UR", "LR"):
                paren = text.find("(", i + 1)
                if paren < 0:
                    raise TranslateError("unterminated raw string literal")
                delim = text[i + 1 : paren]
                end = text.find(")" + delim + '"', paren + 1)
                if end < 0:
                    raise TranslateError("unterminated raw string literal")
                j = end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    if text[j] == "\\":
                        j += 1
                    elif text[j] == "\n":
                        break  # unterminated: let the compiler say so
                    j += 1
                j += 1
            for k in range(i, min(j, n)):
                directive[k] = in_directive
            i = j
            continue
        if c == "'":
            # A digit separator (1'000'000) is not a character literal.
            k = i
            while k > 0 and (text[k - 1] in IDENT_CHARS or text[k - 1] in ".'"):
                k -= 1
            if k < i and text[k].isdigit():
                code[i] = 1
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'":
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            j += 1
            for k in range(i, min(j, n)):
                directive[k] = in_directive
            i = j
            continue
        code[i] = 1
        i += 1
    return code, directive


class Source:
    def __init__(self, text: str):
        self.text = text
        self.code, self.directive = code_mask(text)

    def is_code(self, i: int) -> bool:
        return 0 <= i < len(self.text) and self.code[i] == 1

    def skip_back(self, i: int) -> int:
        """The last index <= i that is code and not whitespace (-1 if none)."""
        while i >= 0 and (not self.code[i] or self.text[i].isspace()):
            i -= 1
        return i

    def skip_fwd(self, i: int) -> int:
        n = len(self.text)
        while i < n and (not self.code[i] or self.text[i].isspace()):
            i += 1
        return i

    def match_back(self, i: int, close: str, open_: str) -> int:
        """text[i] is `close` (')' or '>'); the index of its matching `open_`.
        Inside template arguments, () [] {} nest; a lone < is a less-than."""
        pairs = {")": "(", "]": "[", "}": "{", ">": "<"}
        stack = []
        while i >= 0:
            if self.code[i]:
                c = self.text[i]
                angles = close == ">" and (not stack or stack[-1] == ">")
                if c == ">" and angles and not (i > 0 and self.text[i - 1] == "-"):
                    stack.append(c)
                elif c in ")]}":
                    stack.append(c)
                elif c in "([{" or (c == "<" and angles):
                    if stack and pairs[stack[-1]] == c:
                        stack.pop()
                        if not stack:
                            return i
                    elif c != "<":
                        raise TranslateError("unbalanced brackets before <<<")
            i -= 1
        raise TranslateError(f"no matching {open_!r}")

    def match_fwd(self, i: int) -> int:
        """text[i] is an opening (, [ or {; the index of its match."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = []
        n = len(self.text)
        while i < n:
            if self.code[i]:
                c = self.text[i]
                if c in pairs:
                    stack.append(pairs[c])
                elif c in ")]}":
                    if not stack or stack[-1] != c:
                        raise TranslateError(f"unbalanced {c!r}")
                    stack.pop()
                    if not stack:
                        return i
            i += 1
        raise TranslateError("unbalanced brackets")


def line_of(text: str, i: int) -> int:
    return text.count("\n", 0, i) + 1


# --------------------------------------------------------------------------
# kernel launches


def kernel_start(src: Source, end: int) -> int:
    """end: the index of the last character of the kernel expression."""
    t = src.text
    i = end
    while True:
        if i < 0:
            raise TranslateError("<<< without a kernel before it")
        c = t[i]
        if c == ">":
            lt = src.match_back(i, ">", "<")
            i = src.skip_back(lt - 1)
            continue  # the template's name comes next
        if c == ")":
            return src.match_back(i, ")", "(")
        if c in IDENT_CHARS:
            j = i
            while j > 0 and t[j - 1] in IDENT_CHARS and src.is_code(j - 1):
                j -= 1
            start = j
            k = src.skip_back(j - 1)
            if k >= 1 and t[k] == ":" and t[k - 1] == ":":
                k2 = src.skip_back(k - 2)
                if k2 >= 0 and (t[k2] in IDENT_CHARS or t[k2] == ">"):
                    i = k2
                    continue
                return k - 1  # ::kernel
            if t[start : i + 1] == "template":
                raise TranslateError("unexpected 'template' before <<<")
            return start
        raise TranslateError(f"cannot tell which kernel <<< launches (found {c!r} before it)")


def find_config_end(src: Source, i: int) -> int:
    """i: just after <<<. The index of the matching >>>."""
    t = src.text
    n = len(t)
    depth = 0
    while i < n:
        if src.code[i]:
            c = t[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    raise TranslateError("unbalanced brackets in <<<...>>>")
            elif depth == 0 and t.startswith(">>>", i) and src.code[i + 1] and src.code[i + 2]:
                return i
        i += 1
    raise TranslateError("<<< without >>>")


def template_kernels(text: str) -> set[str]:
    """Names of __global__ function templates declared in text."""
    src = Source(text)
    names = set()
    for m in re.finditer(r"\b__global__\b", text):
        if not src.is_code(m.start()):
            continue
        paren = text.find("(", m.end())
        if paren < 0:
            continue
        head = text[m.end() : paren]
        idents = IDENT.findall(head)
        if not idents:
            continue
        name = idents[-1]
        # Walk back over other specifiers to see whether `template <...>` precedes.
        j = src.skip_back(m.start() - 1)
        while j >= 0:
            if text[j] == ">":
                lt = src.match_back(j, ">", "<")
                k = src.skip_back(lt - 1)
                if k >= 7 and text[k - 7 : k + 1] == "template":
                    names.add(name)
                break
            if text[j] == ")":  # __launch_bounds__(...)
                j = src.skip_back(src.match_back(j, ")", "(") - 1)
                continue
            if text[j] in IDENT_CHARS:
                k = j
                while k > 0 and text[k - 1] in IDENT_CHARS:
                    k -= 1
                word = text[k : j + 1]
                if word in ("static", "inline", "__launch_bounds__", "__noinline__", "__forceinline__",
                            "extern", "__device__", "__host__"):
                    j = src.skip_back(k - 1)
                    continue
                if word == "template":
                    names.add(name)
            break
    return names


def squash(s: str) -> str:
    return " ".join(s.split())


def c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rewrite_launches(src: Source, templates: set[str]) -> list[tuple[int, int, str]]:
    t = src.text
    edits = []
    i = 0
    while True:
        p = t.find("<<<", i)
        if p < 0:
            break
        if not (src.code[p] and src.code[p + 1] and src.code[p + 2]):
            i = p + 3
            continue
        line = line_of(t, p)
        try:
            k_end = src.skip_back(p - 1)
            k_start = kernel_start(src, k_end)
            c_end = find_config_end(src, p + 3)
            a_open = src.skip_fwd(c_end + 3)
            if a_open >= len(t) or t[a_open] != "(":
                raise TranslateError("a kernel launch needs its arguments in parentheses after >>>")
            a_close = src.match_fwd(a_open)
        except TranslateError as e:
            raise TranslateError(f"line {line}: {e}") from None
        kernel = t[k_start : k_end + 1]
        shown = squash(kernel)
        config = t[p + 3 : c_end]
        args = t[a_open + 1 : a_close]
        # Line breaks outside the parts copied verbatim are kept after the call.
        dropped = t[k_start : a_close + 1].count("\n") - config.count("\n") - args.count("\n")
        name = IDENT.findall(kernel)
        deduced = bool(name) and name[-1] in templates and not shown.endswith(">")
        address = "nullptr" if deduced else f"::simt::kernel_address({shown})"
        call = (
            f"::simt::launch(::simt::Site{{__FILE__, __LINE__, {c_string(shown)}}}, "
            f"::simt::config({config}), {address}, "
            f"[&](auto&&... simt_a_) {{ {shown}(simt_a_...); }}"
        )
        if args.strip():
            call += f", {args}"
        call += ")" + "\n" * max(dropped, 0)
        edits.append((k_start, a_close + 1, call))
        i = a_close + 1
    return edits


# --------------------------------------------------------------------------
# __shared__ declarations


def split_top(s: str, sep: str = ",") -> list[str]:
    """Splits at `sep` outside (), [], {} and <> (in a declaration, < is a bracket)."""
    out, depth, cur = [], 0, []
    for c in s:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


ALIGN = re.compile(r"\b(?:__align__|alignas)\s*\(([^()]*)\)")


def parse_declarator(d: str) -> tuple[str, str, str]:
    """'*name[4][N]' -> ('*', 'name', '[4][N]')."""
    d = d.strip()
    dims = ""
    while d.endswith("]"):
        depth = 0
        for k in range(len(d) - 1, -1, -1):
            if d[k] == "]":
                depth += 1
            elif d[k] == "[":
                depth -= 1
                if depth == 0:
                    dims = d[k:] + dims
                    d = d[:k].rstrip()
                    break
        else:
            raise TranslateError("unbalanced [ ] in a __shared__ declaration")
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", d)
    if not m:
        raise TranslateError("cannot find the variable's name in a __shared__ declaration")
    return d[: m.start()], m.group(1), dims


def rewrite_shared(src: Source) -> list[tuple[int, int, str]]:
    t = src.text
    edits = []
    for m in re.finditer(r"\b__shared__\b", t):
        if not src.is_code(m.start()) or src.directive[m.start()]:
            continue
        line = line_of(t, m.start())
        # The statement: from after the previous ; { } (or directive line) to the next ;.
        s = m.start() - 1
        while s >= 0 and not (src.code[s] and t[s] in ";{}") and not src.directive[s]:
            s -= 1
        s += 1
        e = m.end()
        depth = 0
        while e < len(t):
            if src.code[e]:
                if t[e] in "([{":
                    depth += 1
                elif t[e] in ")]}":
                    depth -= 1
                elif t[e] == ";" and depth == 0:
                    break
            e += 1
        if e >= len(t):
            raise TranslateError(f"line {line}: a __shared__ declaration without ';'")
        stmt = t[s:e]
        # Comments inside the statement: drop them (keeping their line breaks).
        clean = "".join(c if src.code[s + k] else ("\n" if c == "\n" else " ") for k, c in enumerate(stmt))
        lead = len(clean) - len(clean.lstrip())
        newlines = clean.count("\n", lead)
        body = " ".join(clean.split())
        words = body.replace("__shared__", " ").split()
        is_extern = "extern" in words
        align = None
        am = ALIGN.search(body)
        if am:
            align = am.group(1).strip()
        body = ALIGN.sub(" ", body)
        body = re.sub(r"\b(extern|static|__shared__)\b", " ", body)
        body = " ".join(body.split())
        try:
            decls = split_top(body)
            base, name, dims = parse_declarator(decls[0])
            if not base.strip():
                raise TranslateError("a __shared__ declaration without a type")
        except TranslateError as err:
            raise TranslateError(f"line {line}: {err}") from None
        # base may end with * or & belonging to the first declarator.
        tm = re.match(r"^(.*?)([\s*&]*)$", base)
        type_, first_ptr = tm.group(1).strip(), tm.group(2).replace(" ", "")
        parts = [(first_ptr, name, dims)]
        for d in decls[1:]:
            ptr, nm, dm = parse_declarator(d)
            parts.append((ptr.replace(" ", ""), nm, dm))
        out = []
        for ptr, nm, dm in parts:
            if is_extern:
                if dm.replace(" ", "") != "[]":
                    raise TranslateError(f"line {line}: extern __shared__ {nm} should be an array of unknown size: {nm}[]")
                ty = f"{type_}{ptr}"
                out.append(f"{ty}* const {nm} = static_cast<{ty}*>(::simt::dynamic_shared_memory());")
            else:
                arg = f"({align})" if align else "()"
                out.append(f"static auto& {nm} = ::simt::shared_var<{type_}{ptr}{dm}>{arg};")
        replacement = " ".join(out) + "\n" * newlines
        edits.append((s + lead, e + 1, replacement))
    return edits


# --------------------------------------------------------------------------
# directives


def rewrite_directives(src: Source, input_dir: str) -> list[tuple[int, int, str]]:
    t = src.text
    edits = []
    for m in re.finditer(r"(?m)^[ \t]*#[ \t]*pragma[ \t]+unroll\b[^\n]*", t):
        h = t.index("#", m.start())
        if src.code[h] and src.directive[h]:
            edits.append((m.start(), m.end(), ""))
    for m in re.finditer(r'(?m)^([ \t]*#[ \t]*include[ \t]*)"([^"\n]+)"', t):
        path = os.path.join(input_dir, m.group(2))
        if os.path.isfile(path):
            edits.append((m.start(2) - 1, m.end(2) + 1, c_string(os.path.abspath(path))))
    return edits


def local_includes(text: str, input_dir: str, seen: set[str]) -> str:
    """The text of the local headers text includes (for template kernel names)."""
    out = []
    for m in re.finditer(r'(?m)^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', text):
        path = os.path.abspath(os.path.join(input_dir, m.group(1)))
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        with open(path, encoding="utf-8", errors="replace") as f:
            sub = f.read()
        out.append(sub)
        out.append(local_includes(sub, os.path.dirname(path), seen))
    return "\n".join(out)


def apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    edits.sort()
    out, pos = [], 0
    for a, b, r in edits:
        if a < pos:
            raise TranslateError("overlapping rewrites (a __shared__ declaration inside a kernel launch?)")
        out.append(text[pos:a])
        out.append(r)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def translate(text: str, shown: str, input_dir: str) -> str:
    src = Source(text)
    templates = template_kernels(text) | template_kernels(local_includes(text, input_dir, set()))
    edits = rewrite_launches(src, templates) + rewrite_shared(src) + rewrite_directives(src, input_dir)
    body = apply(text, edits)
    # simt defines no __noinline__ macro (device.h says why): spell it out here.
    body = re.sub(r"\b__noinline__\b", "__attribute__((noinline))", body)
    return f"#line 1 {c_string(shown)}\n{body}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--wrap", help="template whose #include \"@SOURCE@\" line receives the translation")
    ap.add_argument("--name", help="the file name the output's #line directives give (default: INPUT)")
    a = ap.parse_args(argv)
    # What nvcc accepts, this reads: a byte-order mark (dropped: after the
    # #line directive g++ rejects it), CRLF or CR line ends (read as \n), and
    # bytes that are not UTF-8 (a Latin-1 comment), carried through unchanged.
    with open(a.input, encoding="utf-8-sig", errors="surrogateescape") as f:
        text = f.read()
    shown = a.name or a.input
    try:
        body = translate(text, shown, os.path.dirname(os.path.abspath(a.input)))
    except TranslateError as e:
        print(f"{a.input}:{e}", file=sys.stderr)
        return 1
    if a.wrap:
        with open(a.wrap, encoding="utf-8") as f:
            template = f.read()
        lines = template.split("\n")
        out, placed = [], False
        for n, line in enumerate(lines):
            if re.match(r'^\s*#\s*include\s*"@SOURCE@"', line):
                out.append(body.rstrip("\n"))
                out.append(f"#line {n + 2} {c_string(a.wrap)}")
                placed = True
            else:
                out.append(line.replace("@SOURCE@", shown))
        if not placed:
            print(f"{a.wrap}: no line #include \"@SOURCE@\" to replace", file=sys.stderr)
            return 1
        result = "\n".join(out)
    else:
        result = "#include <cuda_runtime.h>\n" + body
    tmp = a.output + ".tmp"
    if not result.endswith("\n"):
        result += "\n"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(result)
    os.replace(tmp, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
