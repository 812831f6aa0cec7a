// tests/unit/harness/testbed.h: what the harness's unit tests share.
#pragma once

#include <cstring>

#include "cudalab/buffer.h"

namespace testbed {

// A float with the bits the harness fills an output with before a launch
// (cudalab/buffer.h), as a kernel that never wrote the element leaves it.
inline float poison() {
  float f;
  std::memset(&f, cudalab::kPoisonByte, sizeof f);
  return f;
}

}  // namespace testbed
