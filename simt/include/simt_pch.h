// The standard headers every translated student file includes (through
// cuda_runtime.h and cudalab/lab.cuh), precompiled for the student's own
// library in CPU mode (labs/meson.build): parsing them was 0.3 s of the 0.7 s
// that compiling lab 03's file took on every edit. Only standard headers: the
// student's file sees nothing it would not see without it. Here, beside
// cuda_runtime.h, so that `-include simt_pch.h` finds the header itself where
// no precompiled one is built yet (the grader lists a submission's includes
// before it builds anything).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
