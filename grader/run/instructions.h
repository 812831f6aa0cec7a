// grader/run/instructions.h: the GPU instructions a lab's lesson excludes
// (lab.toml's [lab] forbid, cudalab/manifest.h's kForbiddenClasses).
//
// Why: a speed check times one shape and compares the student's kernel with
// FP32 kernels. A launcher that runs the lesson's kernel at every correctness
// shape and, at the timed shape only, splits A and B into fp16 halves on the
// tensor cores is as accurate as FP32 (the replay's per-element check cannot
// tell it apart) and faster than any tiled FP32 kernel: on an H200 it scored
// 100 / 100 with no tiling at all (issue #40). So a lab can forbid the
// instructions its lesson skips, and the grader looks for them in what the
// student's file compiles to:
//
//  - the PTX (`nvcc -ptx` of the file with the build's own flags, confined
//    like the include listing): inline `asm("mma.sync...")` and the
//    nvcuda::wmma API both show there as instructions, and only as those;
//  - the SASS of the object (`cuobjdump -sass`), where cuobjdump is found
//    (a GPU host's toolkit has it): the object's .nv_fatbin is exactly what
//    the speed replay loads, so the SASS check also sees machine code that
//    did not come from the file's PTX (a fatbin put there by host assembly).
//
// The classes:
//   tensor_cores: mma (mma.sp too), wmma.*, wgmma.*, tcgen05.* in PTX; HMMA,
//                 IMMA, BMMA, DMMA, the warpgroup *GMMA and Blackwell's UTC*
//                 in SASS.
//   tma:          cp.async.bulk* and cp.reduce.async.bulk* in PTX (the Tensor
//                 Memory Accelerator's bulk copies); UTMA* and UBLK* in SASS.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudalab {

struct ForbiddenInstruction {
  std::string instruction;  // as compiled: "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
  std::string function;     // the function that holds it, demangled; "" outside any
  bool kernel = false;      // a __global__ function (else a device function)
  std::string klass;        // "tensor_cores"
  std::string where;        // "PTX" or "SASS"

  // One line for the student: which file, function and instruction, and why
  // the lab forbids it.
  std::string describe(const std::string& file) const;
};

// Host-only (tested). The instructions of the classes in `forbid` in PTX text
// as nvcc -ptx writes it (comments skipped, inline assembly included): one per
// function and class, the first found.
std::vector<ForbiddenInstruction> forbidden_in_ptx(const std::string& ptx,
                                                   const std::vector<std::string>& forbid);

// The same in SASS text as `cuobjdump -sass` prints it.
std::vector<ForbiddenInstruction> forbidden_in_sass(const std::string& sass,
                                                    const std::vector<std::string>& forbid);

// The commands that write a student file's PTX to `out`: its compile
// command (argv, from compile_commands.json) with the output, dependency-file
// and compile-only options and a leading ccache taken off, and `-ptx -o OUT`
// added. nvcc writes PTX for one virtual architecture at a time, so one
// command per compute_XX of the build's -gencode flags, as -arch=compute_XX (a
// file may hold other code for each, through __CUDA_ARCH__).
std::vector<std::vector<std::string>> ptx_commands(const std::vector<std::string>& argv,
                                                   const std::filesystem::path& out);

// Why a lab forbids a class, for the student ("" for an unknown class).
std::string forbidden_class_reason(const std::string& klass);

}  // namespace cudalab
