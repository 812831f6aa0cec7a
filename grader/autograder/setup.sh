#!/usr/bin/env bash
# Gradescope's setup (runs once, when the autograder image is built): installs
# what the build needs and builds the grading folder with the skeletons, so
# that grading a submission compiles only the student's files.
# The image needs the CUDA toolkit (nvcc) and, to run the checks, a GPU: use
# the Dockerfile next to this script (an NVIDIA CUDA base image).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CUDALAB_ROOT=${CUDALAB_ROOT:-$(cd "$here/../.." && pwd)}
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends meson ninja-build g++ \
    pkg-config python3 catch2 libfmt-dev libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libpugixml-dev \
    libyaml-cpp-dev libseccomp-dev
fi
export PATH="/usr/local/cuda/bin:$PATH"
"$CUDALAB_ROOT/cudalab" grade --prepare ${CUDALAB_COURSE:+--course "$CUDALAB_COURSE"} \
  ${CUDALAB_GRADE_WORK_DIR:+--work-dir "$CUDALAB_GRADE_WORK_DIR"}
