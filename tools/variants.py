#!/usr/bin/env python3
"""Known student files kept as the difference from a base (tests/variants/README.md).

A variant (tests/variants/<lab>/<name>/) or a gallery entry (tests/gallery/NN_name/)
that is a solution with one mistake holds only the mistake: FILE.patch, a unified
diff that stands for FILE. Its `---` line names the base, a file of the source tree
(solutions/<lab>/FILE, labs/<lab>/FILE, or another variant's or entry's file, which
may itself be a patch); its `+++` line names FILE, the patch's own path less
`.patch`. Paths are relative to the source root.

  variants.py apply PATCH -o OUT        make the file PATCH stands for (Meson's custom_target)
  variants.py deps PATCH                the files making it reads, one a line (Meson's depend_files)
  variants.py materialize OUT_DIR       make every patched file, as OUT_DIR/<its path>
  variants.py check [--against DIR]     every patch applies (and every gallery `from` is found);
                                        --against: each made file equals DIR/<its path>, byte for byte
  variants.py edit FILE [--base BASE]   write FILE to edit: from FILE.patch, or a copy of its base
  variants.py save FILE                 FILE.patch from the edited FILE, and FILE removed
  variants.py diff BASE EDITED [--as FILE]   a patch from BASE to EDITED on stdout
  variants.py refresh                   remake every patch against its base as the base is now

Before the command, --root DIR names the source tree (default: the one this
script is in): `variants.py --root DIR check`.

A patch applies as `git apply` applies one: every context and removed line must
match the base exactly (no fuzz), at the line the hunk names or, when the base
has gained or lost lines above it, at the nearest place where all of them
match (an offset, which `check` notes and `refresh` removes). A hunk that
matches nowhere is an error that names the patch, its base and the hunk, and
shows the first line that differs. Python's standard library only.
"""
import argparse
import difflib
import os
import re
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIX = ".patch"
# Where patches live: the known student files of the framework's tests.
FOLDERS = ("tests/variants", "tests/gallery")
NO_NEWLINE = b"\\ No newline at end of file"
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(Exception):
    pass


class Hunk:
    def __init__(self, number, header, old_start, old_len, new_start, new_len):
        self.number = number
        self.header = header  # the @@ line, as written
        self.old_start, self.old_len = old_start, old_len
        self.new_start, self.new_len = new_start, new_len
        self.lines = []  # (tag, line with its end), tag one of b" ", b"-", b"+"

    def old(self):
        return [line for tag, line in self.lines if tag != b"+"]

    def new(self):
        return [line for tag, line in self.lines if tag != b"-"]


class Patch:
    def __init__(self, path, base, target, hunks):
        self.path = path  # where the patch is, relative to the root
        self.base = base
        self.target = target
        self.hunks = hunks


def split_lines(data):
    """Lines, each with its newline (a carriage return is kept as part of
    the line); the last may have none."""
    lines = data.split(b"\n")
    return [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def rel(root, path):
    """PATH (relative to the working directory, or absolute) relative to ROOT,
    with / between folders; an error where it is outside ROOT."""
    r = os.path.relpath(os.path.abspath(path), root)
    if r == ".." or r.startswith(".." + os.sep) or os.path.isabs(r):
        raise PatchError(f"{path}: outside the source tree {root}")
    return r.replace(os.sep, "/")


def check_tree_path(patch_path, what, path):
    if (not path or path.startswith("/") or "\\" in path or
            any(part in ("", ".", "..") for part in path.split("/"))):
        raise PatchError(f"{patch_path}: its {what} line names '{path}': it must name a file of the source tree, "
                         "relative to its root (e.g. solutions/03_tiling/matmul_tiled.cu)")


def parse(data, path):
    """A patch of one file: its --- and +++ lines, then its hunks."""
    lines = split_lines(data)

    def header(i, marker, what):
        if i >= len(lines) or not lines[i].startswith(marker):
            raise PatchError(f"{path}:{i + 1}: expected the {what} line ('{marker.decode()}PATH')")
        # `diff -u` writes a tab and a time stamp after the name.
        name = lines[i][len(marker):].rstrip(b"\r\n").split(b"\t")[0].decode("utf-8", "surrogateescape")
        check_tree_path(path, marker.decode().strip(), name)
        return name

    base = header(0, b"--- ", "base's")
    target = header(1, b"+++ ", "made file's")
    hunks, i = [], 2
    while i < len(lines):
        m = HUNK.match(lines[i])
        if not m:
            if lines[i].startswith(b"--- "):
                raise PatchError(f"{path}:{i + 1}: a second file: a patch holds the difference of one file")
            raise PatchError(f"{path}:{i + 1}: expected a hunk ('@@ -L,N +L,N @@'), found "
                             f"{lines[i].decode('utf-8', 'replace').rstrip()!r}")
        h = Hunk(len(hunks) + 1, lines[i].rstrip(b"\r\n").decode("utf-8", "replace"), int(m.group(1)),
                 int(m.group(2) if m.group(2) is not None else 1), int(m.group(3)),
                 int(m.group(4) if m.group(4) is not None else 1))
        i += 1
        old = new = 0
        while old < h.old_len or new < h.new_len:
            if i >= len(lines):
                raise PatchError(f"{path}: hunk {h.number} ({h.header}) ends early: the patch is cut short")
            line = lines[i]
            tag, body = line[:1], line[1:]
            if line in (b"\n", b"\r\n"):
                tag, body = b" ", line  # a blank context line whose space an editor removed
            if tag == b"\\":
                if not h.lines:
                    raise PatchError(f"{path}:{i + 1}: '{NO_NEWLINE.decode()}' with no line before it")
                t, prev = h.lines[-1]
                h.lines[-1] = (t, prev.rstrip(b"\n"))
                i += 1
                continue
            if tag not in (b" ", b"-", b"+"):
                raise PatchError(f"{path}:{i + 1}: in hunk {h.number} ({h.header}), a line that is not context "
                                 f"(' '), removed ('-') or added ('+'): the hunk's counts do not match its lines")
            h.lines.append((tag, body))
            old += tag != b"+"
            new += tag != b"-"
            i += 1
            if old > h.old_len or new > h.new_len:
                raise PatchError(f"{path}: hunk {h.number} ({h.header}) has more lines than its header counts")
        if i < len(lines) and lines[i].startswith(b"\\"):
            t, prev = h.lines[-1]
            h.lines[-1] = (t, prev.rstrip(b"\n"))
            i += 1
        hunks.append(h)
    return Patch(path, base, target, hunks)


def show(line):
    return line.decode("utf-8", "replace").rstrip("\r\n")


def apply_hunks(patch, base_lines):
    """The base with the patch's hunks applied, and the offsets at which they
    applied (0 where a hunk matched at its own line)."""
    out, pos, offsets = [], 0, []
    for h in patch.hunks:
        old = h.old()
        want = h.old_start - 1 if h.old_len else h.old_start
        last = len(base_lines) - len(old)
        found = None
        if not old:  # a hunk without context (a base of fewer than 3 lines): only its own line
            found = want if pos <= want <= len(base_lines) else None
        else:
            for delta in range(0, max(want - pos, last - want) + 1):
                for at in (want - delta, want + delta):
                    if pos <= at <= last and base_lines[at:at + len(old)] == old:
                        found = at
                        break
                if found is not None:
                    break
        if found is None:
            raise PatchError(mismatch(patch, h, base_lines, want, pos))
        offsets.append(found - want)
        out += base_lines[pos:found] + h.new()
        pos = found + len(old)
    return out + base_lines[pos:], offsets


def mismatch(patch, h, base_lines, want, pos):
    """Why hunk H does not apply: where it should, its first line that differs
    from the base."""
    old = h.old()
    where = ""
    for k, line in enumerate(old):
        at = want + k
        if at >= len(base_lines) or at < pos or base_lines[at] != line:
            label = f"line {at + 1} of the base: "
            has = show(base_lines[at]) if at < len(base_lines) else f"(past its end, {len(base_lines)} lines)"
            where = f"\n  {label}{has}\n  {'the hunk expects: ':<{len(label)}}{show(line)}"
            break
    return (f"{patch.path}: hunk {h.number} of {len(patch.hunks)} ({h.header}) does not apply to {patch.base}: "
            f"its {len(old)} lines of context and removals are not in the base, at line {want + 1} or anywhere "
            f"after the hunk before it.{where}\n"
            f"  The base changed where this patch changes it: make the patch again (tests/variants/README.md, "
            f"\"When a patch no longer applies\").")


class Tree:
    """Files of a source tree, where FILE.patch stands for FILE."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.offsets = {}  # patch path -> offsets of its hunks, once applied

    def path(self, name):
        return os.path.join(self.root, *name.split("/"))

    def exists(self, name):
        return os.path.isfile(self.path(name)) or os.path.isfile(self.path(name + SUFFIX))

    def load(self, patch_path):
        try:
            with open(self.path(patch_path), "rb") as f:
                data = f.read()
        except OSError as e:
            raise PatchError(f"{patch_path}: {e.strerror}")
        p = parse(data, patch_path)
        if p.target != patch_path[:-len(SUFFIX)]:
            raise PatchError(f"{patch_path}: its +++ line names {p.target}, but a patch makes the file beside it, "
                             f"{patch_path[:-len(SUFFIX)]}")
        return p

    def read(self, name, chain=()):
        """The bytes of file NAME: the file itself, or what NAME.patch makes."""
        if name in chain:
            raise PatchError(f"{chain[0]}{SUFFIX}: its bases go round in a circle: {' <- '.join(chain + (name,))}")
        if os.path.isfile(self.path(name)):
            with open(self.path(name), "rb") as f:
                return f.read()
        if not os.path.isfile(self.path(name + SUFFIX)):
            raise PatchError(f"{name}: no such file (nor {name}{SUFFIX})")
        return self.make(name + SUFFIX, chain + (name,))

    def make(self, patch_path, chain=()):
        p = self.load(patch_path)
        if not self.exists(p.base):
            raise PatchError(f"{patch_path}: its base {p.base} (the --- line) is not in the source tree")
        base = self.read(p.base, chain or (p.target,))
        lines, offsets = apply_hunks(p, split_lines(base))
        self.offsets[patch_path] = offsets
        return b"".join(lines)

    def deps(self, patch_path):
        """The files that making PATCH reads: the patch, and its bases down to a whole file."""
        out, name, seen = [patch_path], self.load(patch_path).base, set()
        while name not in seen:
            seen.add(name)
            if os.path.isfile(self.path(name)) or not os.path.isfile(self.path(name + SUFFIX)):
                out.append(name)
                break
            out.append(name + SUFFIX)
            name = self.load(name + SUFFIX).base
        return out

    def patches(self):
        """Every patch under FOLDERS, sorted."""
        found = []
        for folder in FOLDERS:
            for dirpath, dirnames, files in os.walk(self.path(folder)):
                dirnames.sort()
                found += [rel(self.root, os.path.join(dirpath, f)) for f in sorted(files) if f.endswith(SUFFIX)]
        return found

    def gallery_froms(self):
        """(entry.toml, path) for every [[create]] from = PATH of the gallery."""
        out = []
        gallery = self.path("tests/gallery")
        for entry in sorted(os.listdir(gallery)) if os.path.isdir(gallery) else []:
            toml = os.path.join(gallery, entry, "entry.toml")
            if os.path.isfile(toml):
                with open(toml, "rb") as f:
                    doc = tomllib.load(f)
                out += [(f"tests/gallery/{entry}/entry.toml", c["from"]) for c in doc.get("create", [])
                        if "from" in c]
        return out


def diff(base, edited, base_name, target_name):
    """A unified diff with 3 lines of context, as `diff -u` writes one; the
    headers name BASE_NAME and TARGET_NAME."""
    a, b = split_lines(base), split_lines(edited)
    out = [f"--- {base_name}\n".encode(), f"+++ {target_name}\n".encode()]

    def span(start, stop):
        first, length = start + 1, stop - start
        if length == 1:
            return f"{first}"
        return f"{first - 1 if length == 0 else first},{length}"

    def emit(tag, line):
        out.append(tag + line)
        if not line.endswith(b"\n"):
            out.append(b"\n" + NO_NEWLINE + b"\n")

    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        out.append(f"@@ -{span(i1, i2)} +{span(j1, j2)} @@\n".encode())
        for op, i1, i2, j1, j2 in group:
            if op == "equal":
                for line in a[i1:i2]:
                    emit(b" ", line)
                continue
            for line in a[i1:i2]:
                emit(b"-", line)
            for line in b[j1:j2]:
                emit(b"+", line)
    return b"".join(out)


def default_base(tree, target):
    """The base a new patch for TARGET starts from: the lab's solution (the
    skeleton for a variant with base = "labs"), by the folder it is in."""
    parts = target.split("/")
    name = parts[-1]
    if len(parts) == 5 and parts[:2] == ["tests", "variants"]:
        lab = parts[2]
        expect = tree.path("/".join(parts[:4] + ["expect.toml"]))
        kind = "solutions"
        if os.path.isfile(expect):
            with open(expect, "rb") as f:
                kind = tomllib.load(f).get("base", "solutions")
        return f"{'labs' if kind == 'labs' else 'solutions'}/{lab}/{name}"
    if len(parts) >= 4 and parts[:2] == ["tests", "gallery"]:
        entry = tree.path("/".join(parts[:3] + ["entry.toml"]))
        if os.path.isfile(entry):
            with open(entry, "rb") as f:
                lab = tomllib.load(f).get("lab")
            if lab:
                return f"solutions/{lab}/{name}"
    raise PatchError(f"{target}: no default base: a variant's file (tests/variants/<lab>/<name>/FILE) or a "
                     "gallery entry's (tests/gallery/NN_name/FILE, once its entry.toml names the lab) starts from "
                     "the lab's solution; name a base with --base")


def cmd_check(tree, against):
    problems, made, moved = [], 0, []
    for p in tree.patches():
        target = p[:-len(SUFFIX)]
        if os.path.isfile(tree.path(target)):
            problems.append(f"{target}: both the file and {p} are here: an edit not saved "
                            f"(`tools/variants.py save {target}`), or a copy to delete")
            continue
        try:
            data = tree.make(p)
            if not tree.load(p).hunks:
                problems.append(f"{p}: no difference from its base (edited and not saved?)")
                continue
        except PatchError as e:
            problems.append(str(e))
            continue
        made += 1
        offsets = [o for o in tree.offsets.get(p, []) if o]
        if offsets:
            moved.append(f"note: {p} applies with offsets {offsets} (the base moved; `tools/variants.py "
                         "refresh` rewrites it)")
        if against is not None:
            try:
                with open(os.path.join(against, *target.split("/")), "rb") as f:
                    old = f.read()
            except OSError as e:
                problems.append(f"{target}: not in {against}: {e.strerror}")
                continue
            if old != data:
                a, b = split_lines(old), split_lines(data)
                k = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                problems.append(f"{target}: differs from {against} at line {k + 1} "
                                f"({len(data)} bytes made, {len(old)} there)")
            else:
                print(f"identical: {target} ({len(data)} bytes) from {p}")
    froms = tree.gallery_froms()
    for toml, name in froms:
        if not tree.exists(name):
            problems.append(f"{toml}: [[create]] from = \"{name}\": no such file (nor {name}{SUFFIX})")
    for line in moved:
        print(line)
    for line in problems:
        print(f"FAIL {line}")
    print(f"variants: {made} patches applied{' and compared' if against is not None else ''}, "
          f"{len(froms)} gallery `from`s looked up, {len(problems)} problem(s)")
    return 1 if problems or not made else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--root", default=ROOT, help="the source tree (default: the one this script is in)")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("apply", help="make the file PATCH stands for")
    s.add_argument("patch")
    s.add_argument("-o", "--output", required=True)
    sub.add_parser("deps", help="the files making PATCH reads").add_argument("patch")
    sub.add_parser("materialize", help="make every patched file under OUT_DIR").add_argument("out_dir")
    sub.add_parser("check", help="every patch applies").add_argument(
        "--against", help="a tree (an older checkout) whose files each made file must equal, byte for byte")
    s = sub.add_parser("edit", help="write FILE to edit (from FILE.patch, or a copy of its base)")
    s.add_argument("file")
    s.add_argument("--base", help="the base to patch (default: the patch's, or the lab's solution)")
    sub.add_parser("save", help="FILE.patch from the edited FILE, and FILE removed").add_argument("file")
    s = sub.add_parser("diff", help="a patch from BASE to EDITED on stdout")
    s.add_argument("base")
    s.add_argument("edited")
    s.add_argument("--as", dest="as_", metavar="FILE", help="the file the patch makes (default: EDITED)")
    sub.add_parser("refresh", help="remake every patch against its base as it is now")
    a = ap.parse_args(argv)
    tree = Tree(a.root)
    try:
        if a.command == "apply":
            data = tree.make(rel(tree.root, a.patch))
            with open(a.output, "wb") as f:
                f.write(data)
        elif a.command == "deps":
            print("\n".join(tree.path(n) for n in tree.deps(rel(tree.root, a.patch))))
        elif a.command == "materialize":
            for p in tree.patches():
                out = os.path.join(a.out_dir, *p[:-len(SUFFIX)].split("/"))
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, "wb") as f:
                    f.write(tree.make(p))
            print(f"{len(tree.patches())} files made under {a.out_dir}")
        elif a.command == "check":
            return cmd_check(tree, a.against)
        elif a.command == "edit":
            target = rel(tree.root, a.file)
            patch = target + SUFFIX
            if os.path.isfile(tree.path(target)):
                raise PatchError(f"{target} is here already: save it first (`tools/variants.py save {target}`)")
            had_patch = os.path.isfile(tree.path(patch))
            if a.base:
                base = rel(tree.root, a.base)
            else:
                base = tree.load(patch).base if had_patch else default_base(tree, target)
            base_data = tree.read(base)
            data = tree.make(patch) if had_patch else base_data
            os.makedirs(os.path.dirname(tree.path(target)), exist_ok=True)
            with open(tree.path(target), "wb") as f:
                f.write(data)
            if not had_patch or a.base:
                # Until `save`, the patch only names its base.
                with open(tree.path(patch), "wb") as f:
                    f.write(f"--- {base}\n+++ {target}\n".encode())
            print(f"edit {target} (base: {base}), then: tools/variants.py save {target}")
        elif a.command == "save":
            target = rel(tree.root, a.file)
            patch = target + SUFFIX
            if not os.path.isfile(tree.path(patch)):
                raise PatchError(f"{patch}: not here; start with `tools/variants.py edit {target}`")
            base = tree.load(patch).base
            with open(tree.path(target), "rb") as f:
                edited = f.read()
            text = diff(tree.read(base), edited, base, target)
            lines = text.count(b"\n")
            if lines == 2:
                raise PatchError(f"{target} is {base} unchanged: nothing to save")
            with open(tree.path(patch), "wb") as f:
                f.write(text)
            os.remove(tree.path(target))
            print(f"{patch}: {lines} lines, for the {len(split_lines(edited))} of {target}")
            return cmd_check(tree, None)  # and the patches whose base this is still apply
        elif a.command == "diff":
            base = rel(tree.root, a.base)
            target = rel(tree.root, a.as_ or a.edited)
            with open(a.edited, "rb") as f:
                edited = f.read()
            sys.stdout.buffer.write(diff(tree.read(base), edited, base, target))
        elif a.command == "refresh":
            # Made first, written after: a patch's base may be a patch refreshed here.
            made = {p: tree.make(p) for p in tree.patches()}
            for p, data in made.items():
                base = tree.load(p).base
                text = diff(tree.read(base), data, base, p[:-len(SUFFIX)])
                with open(tree.path(p), "rb") as f:
                    if f.read() == text:
                        continue
                with open(tree.path(p), "wb") as f:
                    f.write(text)
                print(f"rewrote {p}")
    except PatchError as e:
        print(f"variants.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
