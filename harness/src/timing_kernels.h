// timing_kernels.h (harness-internal): the GPU work of cudalab/timing.h that
// must not cost a host round trip of the data: fresh inputs and the
// comparison of a timed output with the reference's. Compiled by nvcc
// (timing_kernels.cu), and for CPU mode translated by simt like a lab's .cu.
// Everything runs on the legacy default stream, asynchronously.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cudalab::timing_kernels {

// p[i] = lo + (hi - lo) * u_i, with u_i 24 random bits / 2^24 from
// (seed, i): exactly representable, different for every seed.
void fill_uniform(float* p, std::size_t n, std::uint64_t seed, float lo, float hi);

// Flips bits of p[i] by a mask from (key, i), in place; applied twice it
// restores p. A reference output scrambled this way is no answer a student's
// kernel could find in device memory and copy.
void scramble(float* p, std::size_t n, std::uint64_t key);

// counters[0] += the number of i where got[i] is not within atol + rtol *
// |expected[i]| of expected[i] (NaN and Inf never are); counters[1] =
// min(counters[1], the first such i). Set counters to {0, ~0} first. With a
// key, expected is read through scramble(key).
void count_mismatches(const float* got, const float* expected, std::size_t n, double atol, double rtol,
                      unsigned long long* counters, std::uint64_t key = 0);

// Reads every byte of p[0, bytes) once (8 at a time; bytes a multiple of 8)
// and XORs them all into *sink, which therefore depends on every load: the
// compiler keeps them all. Writes nothing else.
void read_all(const void* p, std::size_t bytes, unsigned long long* sink);

// expected[index] as count_mismatches read it: one float downloaded.
float read_expected(const float* expected, std::size_t index, std::uint64_t key = 0);

}  // namespace cudalab::timing_kernels
