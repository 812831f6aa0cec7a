#!/usr/bin/env python3
"""Unpacks a student's submission archive (.zip, .tar, .tar.gz, .tgz) safely.

  extract.py [--max-members N] [--max-total-bytes N] [--max-ratio N]
             [--max-depth N] [--] ARCHIVE DEST [MAX_FILE_BYTES]

The grader (extract_archive in grader/run/submission.cpp) passes every bound from
grader/run/submission.h; the defaults below are the same numbers, for running the
script by hand. Nothing inside an archive changes them. Every bound holds
before the thing it bounds is read or written.

The whole archive is refused (exit 2, one line on stderr, and whatever was
written into DEST deleted) when:
  - it has more than MAX_MEMBERS (2000) entries, folders included, counted
    before anything is written (a .zip's central directory is counted from its
    fixed-size headers before zipfile reads it whole):
      the archive has more than 2000 members (a submission may have at most 2000)
  - its .zip central directory is over 4 KiB a member (MAX_MEMBERS x 4 KiB),
    checked before it is read:
      the archive's list of members is N bytes, over the 8192000 byte limit (a submission may have at most 2000 members)
  - it unpacks to more than MAX_TOTAL_BYTES (64 MiB). The sizes its headers
    declare for the regular files within the per-member limit are added up
    first; then every byte is counted again as it is written, since headers
    can lie:
      the archive unpacks to more than 64 MiB (a submission may unpack to at most 64 MiB)
    A .tar.gz or .tgz is one compressed stream: it is decompressed only up to
    MAX_TOTAL_BYTES plus 4 KiB of tar headers per member (skipped members'
    data included), so the total bounds its compression ratio, and one too
    big is refused with the same message. A plain .tar is read only for the
    headers and the members written, bounded the same way.
  - it cannot be read: a damaged archive, a file of another kind, or a tar
    compressed with bzip2 or xz (one line saying so).

A member is skipped, and printed as `skipped<TAB>NAME<TAB>REASON` (NAME on
one line: control characters and non-ASCII bytes written \\xNN, at most 200
characters; after 100 such lines, one `skipped<TAB>...<TAB>N more members
skipped`), when:
  - its name has a control character (NUL included): name with control characters
  - its name is over 1024 bytes, or a part of it over 255: name too long
  - its path is absolute or has a '..' part: unsafe path
  - it is more than MAX_DEPTH (16) folders deep: deeper than 16 folders
  - it is a link, a device or anything but a regular file: not a regular file
  - it declares more than MAX_FILE_BYTES (10 MiB): N bytes, over the L byte limit
  - it has more data than its header declares, or than MAX_FILE_BYTES, when
    written: cut off there and its partial file removed
  - (.zip) it is encrypted, or compressed otherwise than stored or deflated
  - (.zip) it is over 1 MiB and more than MAX_RATIO (100) times its compressed
    size: compression ratio over 100:1
Folders are made as the files in them need them. The skipped lines are
printed only when the archive is read; exit code 0 then.
"""
import argparse
import gzip
import os
import struct
import sys
import tarfile
import unicodedata
import zipfile
import zlib

# The grader passes its own values (grader/run/submission.h owns them); these
# defaults equal them.
# Entries: a submission is a handful of files, 2000 leaves room for a whole
# repository, and bounds what is listed and checked before anything is written.
MAX_MEMBERS = 2000
# Bytes written in all: the graded sources are kilobytes; 64 MiB leaves room
# for what students add, and bounds the disk and time one submission takes.
MAX_TOTAL_BYTES = 64 << 20
# Bytes of one member: a graded source may have 1 MiB (kMaxStudentFileBytes);
# bigger members are data no grading reads, skipped rather than refused.
MAX_FILE_BYTES = 10 << 20
# Compression ratio of a .zip member: source code compresses 3 to 10 times,
# a zip bomb's members a thousand times. Members up to RATIO_MIN_BYTES are
# exempt: a small file of repeated bytes harms nobody.
MAX_RATIO = 100
RATIO_MIN_BYTES = 1 << 20
# Folders deep: a repository is a few deep; this bounds the paths made and
# walked for one member.
MAX_DEPTH = 16
# Names: Linux refuses a part over 255 bytes (NAME_MAX); 1024 bytes for a
# whole path is far above any real one and keeps messages short.
MAX_NAME_BYTES = 1024
MAX_PART_BYTES = 255
# What a student sees of the skipped members: the first 100 lines, names cut
# to 200 characters, so the listing stays a few dozen KiB (the grader keeps
# 256 KiB of this script's output).
MAX_LISTED = 100
MAX_LISTED_NAME = 200
# A tar member's headers (512 bytes, a long name or pax header, padding): 4 KiB
# bounds them, added to the total for the size of a decompressed tar stream.
TAR_HEADER_BYTES_PER_MEMBER = 4096
TAR_END_BYTES = 1 << 20  # end-of-archive blocks and record padding
# A .zip's central directory entry: 46 bytes, the name, extra fields and a
# comment; 4 KiB a member bounds the directory zipfile reads into memory.
ZIP_DIRECTORY_BYTES_PER_MEMBER = 4096
CHUNK = 1 << 20  # bytes read and written at a time


class Refused(Exception):
    """The whole archive is refused; the message, one line, is for the student."""


def size_text(n):
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


def members_message(most):
    return f"the archive has more than {most} members (a submission may have at most {most})"


def total_message(most):
    return (f"the archive unpacks to more than {size_text(most)} "
            f"(a submission may unpack to at most {size_text(most)})")


def raw_bytes(c):
    try:
        return c.encode("utf-8", "surrogateescape")  # tar's undecodable bytes
    except UnicodeEncodeError:
        return c.encode("utf-8", "surrogatepass")


def shown(text, most=MAX_LISTED_NAME):
    """text on one line, in printable ASCII (\\xNN for the rest), cut to `most` characters."""
    out, n = [], 0
    for c in text:
        piece = c if " " <= c <= "~" else "".join(f"\\x{b:02x}" for b in raw_bytes(c))
        if n + len(piece) > most:
            out.append("...")
            break
        out.append(piece)
        n += len(piece)
    return "".join(out)


def checked_name(name, max_depth):
    """(relative path, None) for a member that may be written, else (None, reason)."""
    if any(unicodedata.category(c) == "Cc" for c in name):
        return None, "name with control characters"
    try:
        name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None, "name with control characters"  # not text a file system takes
    unified = name.replace("\\", "/")
    parts = [p for p in unified.split("/") if p not in ("", ".")]
    if len(raw_bytes(name)) > MAX_NAME_BYTES or any(len(raw_bytes(p)) > MAX_PART_BYTES for p in parts):
        return None, "name too long"
    if not parts or unified.startswith("/") or ".." in parts:
        return None, "unsafe path"
    if len(parts) - 1 > max_depth:
        return None, f"deeper than {max_depth} folders"
    return os.path.join(*parts), None


class Listing:
    """The skipped members, printed once the archive has been read."""

    def __init__(self):
        self.lines, self.more = [], 0

    def skip(self, name, reason):
        if len(self.lines) < MAX_LISTED:
            self.lines.append(f"skipped\t{shown(name)}\t{reason}")
        else:
            self.more += 1

    def print(self):
        for line in self.lines:
            print(line)
        if self.more:
            print(f"skipped\t...\t{self.more} more members skipped")


class Output:
    """Writes members into dest, counting every byte as it is written."""

    def __init__(self, dest, max_total, max_file):
        self.dest, self.max_total, self.max_file = dest, max_total, max_file
        self.total = 0
        self.files = {}  # paths written, in order (a dict as an ordered set)
        self.dirs = []  # folders made, in order

    def _folders_for(self, rel):
        path = self.dest
        for part in rel.split(os.sep)[:-1]:
            path = os.path.join(path, part)
            try:
                os.mkdir(path)
                self.dirs.append(path)
            except FileExistsError:
                if os.path.islink(path) or not os.path.isdir(path):
                    return False
        return True

    def write(self, rel, chunks, declared):
        """Writes one member: None, or why it was skipped. Raises Refused over the total."""
        clash = "a file and a folder with the same name"
        if not self._folders_for(rel):
            return clash
        path = os.path.join(self.dest, rel)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        except (IsADirectoryError, NotADirectoryError, FileExistsError):
            return clash
        self.files[path] = True
        limit = min(declared, self.max_file)
        written = 0
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                if written + len(chunk) > limit:
                    break
                if self.total + len(chunk) > self.max_total:
                    raise Refused(total_message(self.max_total))
                out.write(chunk)
                written += len(chunk)
                self.total += len(chunk)
            else:
                return None
        os.remove(path)
        del self.files[path]
        if declared <= self.max_file:
            return f"more data than the {declared} bytes its header declares"
        return f"over the {self.max_file} byte limit"

    def remove_all(self):
        for path in self.files:
            try:
                os.remove(path)
            except OSError:
                pass
        for path in reversed(self.dirs):
            try:
                os.rmdir(path)
            except OSError:
                pass


class Bounded:
    """A file that refuses the archive once more than `cap` bytes come out of it.

    A decompressed stream (count_seeks) decompresses what a seek skips, so its
    position is bounded; a plain file seeks for free, so the bytes read are."""

    def __init__(self, f, cap, count_seeks, message):
        self.f, self.cap, self.count_seeks, self.message = f, cap, count_seeks, message
        self.read_bytes = 0

    def tell(self):
        return self.f.tell()

    def seek(self, pos, whence=0):
        if whence == 1:
            pos += self.f.tell()
        elif whence != 0:
            raise OSError("seek from the end of a tar stream")
        if self.count_seeks and pos > self.cap:
            self.f.seek(self.cap)
            if self.f.read(1):
                raise Refused(self.message)
            return self.f.tell()
        return self.f.seek(pos)

    def read(self, n=-1):
        room = self.cap - (self.f.tell() if self.count_seeks else self.read_bytes)
        if n is None or n < 0 or n > room:
            data = self.f.read(max(room, 0) + 1)  # one byte more tells whether there is more
            if len(data) > room:
                raise Refused(self.message)
        else:
            data = self.f.read(n)
        self.read_bytes += len(data)
        return data


def chunks(f):
    while True:
        b = f.read(CHUNK)
        if not b:
            return
        yield b


def check_zip_directory(f, max_members):
    """Counts the entries of a .zip's central directory from their 46-byte
    headers, before zipfile reads the directory whole. Finds it as zipfile
    does (the end record last, else the last one in the final 64 KiB)."""
    f.seek(0, 2)
    size = f.tell()
    if size < 22:
        return
    f.seek(size - 22)
    tail = f.read(22)
    if tail[:4] == b"PK\x05\x06" and tail[-2:] == b"\0\0":
        end = size - 22
    else:
        start = max(size - (1 << 16) - 22, 0)
        f.seek(start)
        tail = f.read()
        found = tail.rfind(b"PK\x05\x06")
        if found < 0 or len(tail) - found < 22:
            return  # zipfile will not call it a zip either
        end = start + found
        f.seek(end)
        tail = f.read(22)
    entries, dir_size = struct.unpack("<HL", tail[10:16])
    candidates = [(entries, dir_size, end - dir_size)]
    if end >= 76:  # a zip64 end record and its locator just before
        f.seek(end - 76)
        z64 = f.read(76)
        if z64[56:60] == b"PK\x06\x07" and z64[:4] == b"PK\x06\x06":
            entries64, dir_size64 = struct.unpack("<Q Q", z64[32:48])
            candidates.append((entries64, dir_size64, end - 76 - dir_size64))
    cap = max_members * ZIP_DIRECTORY_BYTES_PER_MEMBER
    for entries, dir_size, dir_start in candidates:
        if entries > max_members:
            raise Refused(members_message(max_members))
        if dir_size > cap:
            raise Refused(f"the archive's list of members is {dir_size} bytes, over the {cap} byte limit "
                          f"(a submission may have at most {max_members} members)")
        if dir_start < 0:
            continue
        f.seek(dir_start)
        walked = count = 0
        while walked < dir_size:
            head = f.read(46)
            if len(head) < 46 or head[:4] != b"PK\x01\x02":
                break  # damaged: zipfile says so
            count += 1
            if count > max_members:
                raise Refused(members_message(max_members))
            name, extra, comment = struct.unpack("<3H", head[28:34])
            f.seek(name + extra + comment, 1)
            walked += 46 + name + extra + comment


def unpack_zip(archive, out, listing, a):
    with open(archive, "rb") as f:
        check_zip_directory(f, a.max_members)
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
        if len(infos) > a.max_members:
            raise Refused(members_message(a.max_members))
        plan, declared = [], 0
        for info in infos:
            if info.is_dir():
                continue
            mode = (info.external_attr >> 16) & 0o170000
            regular = mode in (0, 0o100000)
            if regular and info.file_size <= a.max_file_bytes:
                declared += info.file_size
            rel, reason = checked_name(info.filename, a.max_depth)
            if reason:
                pass
            elif not regular:
                reason = "not a regular file"
            elif info.file_size > a.max_file_bytes:
                reason = f"{info.file_size} bytes, over the {a.max_file_bytes} byte limit"
            elif info.flag_bits & 0x1:
                reason = "encrypted (a password is needed)"
            elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                # bzip2 and LZMA decompress without a bound on what one read gives
                reason = "compressed with a method other than deflate"
            elif info.file_size > RATIO_MIN_BYTES and info.file_size > a.max_ratio * info.compress_size:
                reason = f"compression ratio over {a.max_ratio}:1"
            if reason:
                listing.skip(info.filename, reason)
            else:
                plan.append((info, rel))
        if declared > a.max_total_bytes:
            raise Refused(total_message(a.max_total_bytes))
        for info, rel in plan:
            with z.open(info) as f:
                reason = out.write(rel, chunks(f), info.file_size)
            if reason:
                listing.skip(info.filename, reason)


def unpack_tar(archive, out, listing, a):
    cap = a.max_total_bytes + a.max_members * TAR_HEADER_BYTES_PER_MEMBER + TAR_END_BYTES
    with open(archive, "rb") as raw:
        magic = raw.read(6)
        raw.seek(0)
        if magic[:3] == b"BZh" or magic == b"\xfd7zXZ\0":
            kind = "bzip2" if magic[:3] == b"BZh" else "xz"
            raise Refused(f"the archive is compressed with {kind} (a submission may be a .zip, .tar, .tar.gz or .tgz)")
        if magic[:2] == b"\x1f\x8b":
            stream = Bounded(gzip.GzipFile(fileobj=raw, mode="rb"), cap, True, total_message(a.max_total_bytes))
        else:
            stream = Bounded(raw, cap, False, total_message(a.max_total_bytes))
        try:
            t = tarfile.open(fileobj=stream, mode="r:")  # "r:": only our bounded decompression
        except tarfile.ReadError as e:
            raise Refused(f"it is not a readable .zip, .tar or .tar.gz archive ({shown(str(e), 200)})")
        with t:
            members = []
            while True:
                m = t.next()
                if m is None:
                    break
                members.append(m)
                if len(members) > a.max_members:
                    raise Refused(members_message(a.max_members))
            plan, declared = [], 0
            for m in members:
                if m.isdir():
                    continue
                if m.isfile() and m.size <= a.max_file_bytes:
                    declared += m.size
                rel, reason = checked_name(m.name, a.max_depth)
                if reason:
                    pass
                elif not m.isfile():
                    reason = "not a regular file"
                elif m.size > a.max_file_bytes:
                    reason = f"{m.size} bytes, over the {a.max_file_bytes} byte limit"
                if reason:
                    listing.skip(m.name, reason)
                else:
                    plan.append((m, rel))
            if declared > a.max_total_bytes:
                raise Refused(total_message(a.max_total_bytes))
            for m, rel in plan:
                reason = out.write(rel, chunks(t.extractfile(m)), m.size)
                if reason:
                    listing.skip(m.name, reason)


class Arguments(argparse.ArgumentParser):
    def error(self, message):
        raise Refused(f"extract.py: {message}")


def arguments(argv):
    p = Arguments(prog="extract.py", add_help=False)
    p.add_argument("--max-members", type=int, default=MAX_MEMBERS)
    p.add_argument("--max-total-bytes", type=int, default=MAX_TOTAL_BYTES)
    p.add_argument("--max-ratio", type=int, default=MAX_RATIO)
    p.add_argument("--max-depth", type=int, default=MAX_DEPTH)
    p.add_argument("archive")
    p.add_argument("dest")
    p.add_argument("max_file_bytes", type=int, nargs="?", default=MAX_FILE_BYTES)
    return p.parse_args(argv)


def main(argv):
    out = None
    try:
        a = arguments(argv[1:])
        os.makedirs(a.dest, exist_ok=True)
        out = Output(a.dest, a.max_total_bytes, a.max_file_bytes)
        listing = Listing()
        if zipfile.is_zipfile(a.archive):
            unpack_zip(a.archive, out, listing, a)
        else:
            unpack_tar(a.archive, out, listing, a)
    except Exception as e:  # a traceback must never reach a student: one line instead
        if isinstance(e, Refused):
            message = str(e)
        elif isinstance(e, OSError) and e.strerror:  # the system's words, without our paths
            message = f"the archive cannot be read ({shown(e.strerror, 200)})"
        elif isinstance(e, (OSError, EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError, UnicodeDecodeError)):
            message = f"the archive is damaged ({shown(str(e) or type(e).__name__, 200)})"
        else:
            message = f"the archive cannot be unpacked ({shown(type(e).__name__ + ': ' + str(e), 200)})"
        if out is not None:
            out.remove_all()
        print(message, file=sys.stderr)
        return 2
    listing.print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
