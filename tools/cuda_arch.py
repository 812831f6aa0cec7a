#!/usr/bin/env python3
"""Prints the nvcc -gencode flags for the gpu_arch build option, one per line.

"auto": the architectures of the visible GPUs (nvidia-smi), or, with no GPU,
sm_75 alone, the oldest that nvcc 13 accepts: its PTX lets any newer GPU JIT
the kernels, and a machine without a GPU builds to prove that the code
compiles (five architectures made every nvcc compile of a fresh clone about
five times slower on CI's two cores). A build whose kernels are timed belongs
on the GPU host, where "auto" picks its own architecture. The newest
architecture also gets PTX, so newer GPUs can JIT the kernels.

"--visible" prints the visible GPUs' architectures instead (nothing without a
GPU), for the build to know whether this machine has one.
"""
import subprocess
import sys

DEFAULT = ["75"]


def visible_gpus():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted({line.strip().replace(".", "") for line in out.splitlines() if line.strip()})


def main():
    value = sys.argv[1] if len(sys.argv) > 1 else "auto"
    if value == "--visible":
        print(" ".join(visible_gpus()))
        return
    if value == "native":
        print("-arch=native")
        return
    archs = visible_gpus() if value == "auto" else [a.strip() for a in value.replace(",", ";").split(";") if a.strip()]
    if not archs:
        archs = DEFAULT
    for a in archs:
        if not a.isdigit() or int(a) < 75:
            sys.exit(f"cuda_arch: '{a}' is not an architecture nvcc 13 can build (75 or newer, e.g. 90)")
    archs = sorted(set(archs), key=int)
    for a in archs:
        print(f"-gencode=arch=compute_{a},code=sm_{a}")
    print(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")


main()
