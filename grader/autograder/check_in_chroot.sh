#!/usr/bin/env bash
# check_in_chroot.sh: what `docker build -f grader/autograder/Dockerfile .` and one
# `run_autograder` would do, on a machine with no Docker engine (or no access to Docker
# Hub): the image's steps in a Debian 13 (trixie) chroot, with the host's CUDA toolkit
# bound in read-only in place of the nvidia/cuda base image.
#
# Trixie stands in for the image's Ubuntu 24.04: the same package names, and the same
# generation of what matters to the build: Catch2 v3 (3.7.1; Ubuntu 24.04 has 3.4.0),
# g++ 14 (Ubuntu: 13), Meson 1.7 (1.3), fmt 10 (9), toml++ 3.4 (3.4). Debian 12 has
# Catch2 v2, so this is where the Catch2 v3 code paths (CUDALAB_CATCH_V3_BUILD) compile
# and run. It cannot run a GPU check: grading reports them "not run" (cudalab exit 3).
#
# Steps, each fatal on failure:
#   1. debootstrap trixie (minbase) into the chroot folder, if it is not there yet;
#   2. bind /proc, /dev and the CUDA toolkit (read-only at /usr/local/cuda) into it;
#   3. copy this checkout's files (tracked and untracked-not-ignored, as `COPY .` would
#      take them, without build folders) to /autograder/source, fresh each run;
#   4. run grader/autograder/setup.sh there (apt-get install, `cudalab grade --prepare`:
#      every lab built with nvcc and g++), and check that the build chose Catch2 v3;
#   5. build the framework in /tmp/check-build and run the suites that need no GPU:
#      unit and cpu (CPU mode runs every lab's kernels and the Catch2 runner for real);
#      --full runs every suite (`cudalab selftest`: adds the grading and gallery tests);
#   6. run_autograder on solutions/ as the submission, and check results.json: written
#      by cudalab itself (not the fallback), valid, with tests, and no lab failing to build;
#   7. run_autograder again with a course.toml that sets cpu_mode = true: the checks then
#      run through the Catch2 v3 runner, and every correctness check must pass.
# The mounts are undone on exit; the chroot stays for the next run (apt-get then has
# little to do).
#
# Usage (as root; needs /usr/local/cuda/bin/nvcc or CUDA_HOME, and deb.debian.org):
#   grader/autograder/check_in_chroot.sh [--root DIR] [--full] [--mirror URL]
#     --root DIR    the chroot (default /tmp/trixie-root)
#     --full        run every test suite, not only unit and cpu
# Time on 2 CPU cores: about 15 min with the chroot already there (setup.sh's apt-get ~0
# and `grade --prepare` ~4 min; the framework's build ~6 min and the unit and cpu suites ~2;
# run_autograder ~1 min, and ~4 in CPU mode). The first run adds debootstrap (~3 min) and
# apt-get (~2 min). --full adds the grading and gallery suites (~10 min more).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
root=/tmp/trixie-root
mirror=http://deb.debian.org/debian
suites=(--suite unit --suite cpu)
while (($#)); do
  case $1 in
    --root) root=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --full) suites=(); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_in_chroot: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
say() { printf '\n=== check_in_chroot: %s\n' "$*"; }
die() { echo "check_in_chroot: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount, chroot)"
cuda=$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")
[ -x "$cuda/bin/nvcc" ] || die "no nvcc in $cuda/bin (set CUDA_HOME)"
start=$SECONDS

# --- 1. the chroot
if [ ! -x "$root/usr/bin/apt-get" ]; then
  say "debootstrap trixie into $root"
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  debootstrap --variant=minbase trixie "$root" "$mirror" || die "debootstrap"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

# --- 2. mounts, undone on exit (only those this run made)
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[i]}" || umount -lR "${mounted[i]}" || true; done
}
trap cleanup EXIT
bind() {  # bind SRC DEST [ro]
  mkdir -p "$2"
  mountpoint -q "$2" && return 0
  if [ "$1" = proc ]; then mount -t proc proc "$2"; else mount --rbind "$1" "$2" && mount --make-rslave "$2"; fi
  mounted+=("$2")
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$2"
  return 0
}
bind proc "$root/proc"
bind /dev "$root/dev"
bind "$cuda" "$root/usr/local/cuda" ro

# --- 3. the source, as the Dockerfile's COPY would take it
say "copying $src to $root/autograder/source"
rm -rf "$root/autograder/source" "$root/autograder/check"
mkdir -p "$root/autograder/source"
(cd "$src" && git ls-files -z -co --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$root/autograder/source"

in_chroot() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "$@"
}

# --- 4. the image's setup
say "setup.sh (apt-get install, cudalab grade --prepare)"
in_chroot /autograder/source/grader/autograder/setup.sh || die "setup.sh"
in_chroot bash -c 'echo "versions:"; . /etc/os-release; echo "  $PRETTY_NAME"
  dpkg-query -W -f "  \${Package} \${Version}\n" catch2 libfmt-dev libtomlplusplus-dev nlohmann-json3-dev \
    libcli11-dev libpugixml-dev libyaml-cpp-dev meson ninja-build
  g++ --version | head -1 | sed "s/^/  /"; nvcc --version | grep -o "release.*" | sed "s/^/  nvcc /"'
grep -q CUDALAB_CATCH_V3_BUILD "$root/autograder/source/build/build.ninja" ||
  die "the build did not choose Catch2 v3 (no CUDALAB_CATCH_V3_BUILD in build/build.ninja)"
echo "  the build chose Catch2 v3 (CUDALAB_CATCH_V3_BUILD)"

# --- 5. the framework's own tests
say "framework build and tests: meson test ${suites[*]:-(all suites)}"
in_chroot bash -euo pipefail -c '
  rm -rf /tmp/check-build
  meson setup /tmp/check-build /autograder/source >/tmp/check-setup.log || { cat /tmp/check-setup.log; exit 1; }
  grep -E "Catch2:|CUDA architectures" /tmp/check-setup.log || true
  ninja -C /tmp/check-build -j"$(nproc)" >/tmp/check-ninja.log 2>&1 || { tail -60 /tmp/check-ninja.log; exit 1; }
  grep -ci "warning" /tmp/check-ninja.log | sed "s/^/  compiler warnings: /" || true
  meson test -C /tmp/check-build --print-errorlogs "$@"' check "${suites[@]}" || die "framework tests"

# --- 6. one submission through run_autograder
say "run_autograder on solutions/"
ag=$root/autograder/check
mkdir -p "$ag/submission"
cp -r "$root/autograder/source/solutions/." "$ag/submission/"
in_chroot env AUTOGRADER_ROOT=/autograder/check /autograder/source/grader/autograder/run_autograder ||
  die "run_autograder exited non-zero"
python3 - "$ag/results" <<'PY' || die "results.json"
import json, os, sys
res = sys.argv[1]
data = json.load(open(os.path.join(res, "results.json")))
if not os.path.exists(os.path.join(res, "cudalab", "results.json")):
    sys.exit("results.json is run_autograder's fallback: cudalab did not grade:\n" + data.get("output", ""))
tests = data.get("tests")
assert isinstance(data.get("score"), (int, float)), "no numeric score"
assert isinstance(tests, list) and tests, "no tests"
for t in tests:
    assert "name" in t, f"a test without a name: {t}"
text = json.dumps(data).lower()
for bad in ("did not compile", "failed to build", "could not grade"):
    assert bad not in text, f"results.json mentions '{bad}'"
print(f"  results.json: score {data['score']}, {len(tests)} tests"
      + (f", max {data['max_score']}" if "max_score" in data else ""))
PY
grep -E "^GPU|^total" "$ag/results/grader.log" | sed 's/^/  grader.log: /' || true

# --- 7. the same, graded in CPU mode: the checks run through the Catch2 runner
say "run_autograder on solutions/ with cpu_mode = true"
cpu=$root/autograder/check-cpu
rm -rf "$cpu" && mkdir -p "$cpu/submission"
cp -r "$ag/submission/." "$cpu/submission/"
grep -v '^cpu_mode *=' "$root/autograder/source/course.toml" | sed 's/^\[grading\]$/&\ncpu_mode = true/' >"$cpu/course.toml"
grep -q '^cpu_mode = true' "$cpu/course.toml" || die "could not add cpu_mode to course.toml"
in_chroot env AUTOGRADER_ROOT=/autograder/check-cpu CUDALAB_COURSE=/autograder/check-cpu/course.toml \
  CUDALAB_GRADE_WORK_DIR=/autograder/check-cpu/work /autograder/source/grader/autograder/run_autograder \
  >/dev/null || die "run_autograder (CPU mode) exited non-zero"
python3 - "$cpu/results" <<'PY' || die "results.json (CPU mode)"
import json, os, sys
res = sys.argv[1]
assert os.path.exists(os.path.join(res, "cudalab", "results.json")), "cudalab did not grade (see grader.log)"
data = json.load(open(os.path.join(res, "results.json")))
tests = data["tests"]
passed = [t for t in tests if t.get("status") == "passed"]
wrong = [t["name"] for t in tests if t.get("status") != "passed" and not t.get("output", "").startswith("not_run")]
assert passed, "no check passed"
assert not wrong, f"the solution fails: {wrong}"
print(f"  results.json: score {data['score']}, {len(tests)} tests, {len(passed)} passed, "
      f"{len(tests) - len(passed)} not run (speed checks need a GPU)")
PY
say "passed in $(((SECONDS - start) / 60)) min"
