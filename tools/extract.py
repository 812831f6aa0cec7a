#!/usr/bin/env python3
"""Extracts a submission archive (.zip, .tar, .tar.gz, .tgz) safely.

  extract.py ARCHIVE DEST [MAX_FILE_BYTES]

Only regular files are written. Members with absolute paths, '..' parts,
links or devices are skipped, and so are files over MAX_FILE_BYTES (default
10 MiB); each skipped member is printed as `skipped<TAB>NAME<TAB>REASON`.
Exit code 0 when the archive could be read, 2 when it could not.
"""
import os
import sys
import tarfile
import zipfile


def safe_name(name):
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or any(p == ".." for p in parts):
        return None
    return os.path.join(*parts)


def write(dest, rel, data_iter):
    path = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(path) or dest, exist_ok=True)
    with open(path, "wb") as out:
        for chunk in data_iter:
            out.write(chunk)


def chunks(f):
    while True:
        b = f.read(1 << 20)
        if not b:
            return
        yield b


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    archive, dest = argv[1], argv[2]
    limit = int(argv[3]) if len(argv) > 3 else 10 << 20
    os.makedirs(dest, exist_ok=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    if info.is_dir():
                        continue
                    rel = safe_name(info.filename)
                    mode = (info.external_attr >> 16) & 0o170000
                    if rel is None:
                        print(f"skipped\t{info.filename}\tunsafe path")
                    elif mode and mode != 0o100000:
                        print(f"skipped\t{info.filename}\tnot a regular file")
                    elif info.file_size > limit:
                        print(f"skipped\t{info.filename}\t{info.file_size} bytes, over the {limit} byte limit")
                    else:
                        with z.open(info) as f:
                            write(dest, rel, chunks(f))
        else:
            with tarfile.open(archive) as t:
                for m in t.getmembers():
                    if m.isdir():
                        continue
                    rel = safe_name(m.name)
                    if rel is None:
                        print(f"skipped\t{m.name}\tunsafe path")
                    elif not m.isfile():
                        print(f"skipped\t{m.name}\tnot a regular file")
                    elif m.size > limit:
                        print(f"skipped\t{m.name}\t{m.size} bytes, over the {limit} byte limit")
                    else:
                        write(dest, rel, chunks(t.extractfile(m)))
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as e:
        print(f"cannot read {archive}: {e}", file=sys.stderr)
        return 2
    return 0


sys.exit(main(sys.argv))
