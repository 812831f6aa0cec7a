// simt/device.h: the device side of CUDA C++ for kernels compiled by the host
// compiler in cudalab's CPU mode.
//
// Each CUDA thread runs as a fiber (simt/src/scheduler.cpp). threadIdx,
// blockIdx, blockDim and gridDim are variables the scheduler sets before it
// resumes a fiber, so every fiber sees its own. __syncthreads() suspends the
// fiber until every thread of its block that has not returned has reached a
// __syncthreads() too.
//
// Qualifiers: __global__, __device__, __host__ and __constant__ vanish;
// __shared__ variables in a .cu file are rewritten by simt_translate.py into
// references to per-launch shared storage (so they can be poisoned before
// each block and told apart in the access report); one that the translator
// does not see (in a header) falls back to a `static` variable, which is
// right too, since the blocks of a launch run one after another.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "vector_types.h"

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline __attribute__((always_inline))
// No __noinline__ macro: libstdc++ 13 writes __attribute__((__noinline__)),
// which such a macro would break (as CUDA's own headers avoid it for host
// code). The translator rewrites __noinline__ in .cu files instead.
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#ifndef __shared__
#define __shared__ static
#endif

// The built-in variables. They are const for the kernel; the scheduler
// writes them through another name (simt/src/scheduler.cpp).
#ifndef SIMT_RUNTIME_INTERNAL
extern const uint3 threadIdx __asm__("simt_threadIdx");
extern const uint3 blockIdx __asm__("simt_blockIdx");
extern const dim3 blockDim __asm__("simt_blockDim");
extern const dim3 gridDim __asm__("simt_gridDim");
#endif
constexpr int warpSize = 32;

// --- synchronisation
namespace simt {
// A __syncthreads() call's place in the source. The macros below give each
// call written in the source its own (a static), which the compiler keeps
// where it copies the call: threads of a block that wait at different ones
// stop the launch, as do other barriers not every thread reaches
// (simt/README.md, "Barriers").
struct SyncSite {
  const char* file;
  int line;
};
}  // namespace simt
// Called without the macros, the call's return address stands for its place.
void __syncthreads();
void __syncthreads(const simt::SyncSite* site);
int __syncthreads_count(int predicate);
int __syncthreads_count(int predicate, const simt::SyncSite* site);
int __syncthreads_and(int predicate);
int __syncthreads_and(int predicate, const simt::SyncSite* site);
int __syncthreads_or(int predicate);
int __syncthreads_or(int predicate, const simt::SyncSite* site);
#ifndef SIMT_RUNTIME_INTERNAL
#define SIMT_SYNC_SITE                                               \
  ([]() -> const ::simt::SyncSite* {                                 \
    static constexpr ::simt::SyncSite simt_site{__FILE__, __LINE__}; \
    return &simt_site;                                               \
  }())
#define __syncthreads() __syncthreads(SIMT_SYNC_SITE)
#define __syncthreads_count(...) __syncthreads_count((__VA_ARGS__), SIMT_SYNC_SITE)
#define __syncthreads_and(...) __syncthreads_and((__VA_ARGS__), SIMT_SYNC_SITE)
#define __syncthreads_or(...) __syncthreads_or((__VA_ARGS__), SIMT_SYNC_SITE)
#endif
// One OS thread runs every fiber, so memory is always coherent: fences only
// keep the compiler from moving memory accesses across them.
inline void __threadfence() {
  __asm__ __volatile__("" ::: "memory");
}
inline void __threadfence_block() {
  __asm__ __volatile__("" ::: "memory");
}
inline void __threadfence_system() {
  __asm__ __volatile__("" ::: "memory");
}
// Stops the kernel as a GPU trap does (cudaErrorLaunchFailure).
[[noreturn]] void __trap();

// --- atomics: fibers switch only at barriers, so a plain read-modify-write
// is atomic here.
#define SIMT_ATOMIC(name, T, expr)   \
  inline T name(T* address, T val) { \
    T old = *address;                \
    *address = (expr);               \
    return old;                      \
  }
#define SIMT_ATOMIC_INTS(name, expr)    \
  SIMT_ATOMIC(name, int, expr)          \
  SIMT_ATOMIC(name, unsigned int, expr) \
  SIMT_ATOMIC(name, unsigned long long, expr)
SIMT_ATOMIC_INTS(atomicAdd, old + val)
SIMT_ATOMIC(atomicAdd, float, old + val)
SIMT_ATOMIC(atomicAdd, double, old + val)
SIMT_ATOMIC_INTS(atomicSub, old - val)
SIMT_ATOMIC(atomicSub, float, old - val)
SIMT_ATOMIC_INTS(atomicExch, val)
SIMT_ATOMIC(atomicExch, float, val)
SIMT_ATOMIC_INTS(atomicMin, val < old ? val : old)
SIMT_ATOMIC(atomicMin, long long, val < old ? val : old)
SIMT_ATOMIC_INTS(atomicMax, val > old ? val : old)
SIMT_ATOMIC(atomicMax, long long, val > old ? val : old)
SIMT_ATOMIC_INTS(atomicAnd, old& val)
SIMT_ATOMIC_INTS(atomicOr, old | val)
SIMT_ATOMIC_INTS(atomicXor, old ^ val)
SIMT_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1)
SIMT_ATOMIC(atomicDec, unsigned int, (old == 0 || old > val) ? val : old - 1)
#undef SIMT_ATOMIC_INTS
#undef SIMT_ATOMIC
#define SIMT_CAS(T)                                  \
  inline T atomicCAS(T* address, T compare, T val) { \
    T old = *address;                                \
    if (old == compare) *address = val;              \
    return old;                                      \
  }
SIMT_CAS(int)
SIMT_CAS(unsigned int)
SIMT_CAS(unsigned long long)
SIMT_CAS(unsigned short)
#undef SIMT_CAS

// --- loads through the read-only cache, and loads and stores with a cache
// hint (__ldcs: evict-first, ...): plain loads and stores here, where no
// cache is modelled; the GPU gives the same values.
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
#define SIMT_LOAD_HINT(name)  \
  template <class T>          \
  inline T name(const T* p) { \
    return *p;                \
  }
SIMT_LOAD_HINT(__ldca)
SIMT_LOAD_HINT(__ldcg)
SIMT_LOAD_HINT(__ldcs)
SIMT_LOAD_HINT(__ldlu)
SIMT_LOAD_HINT(__ldcv)
#undef SIMT_LOAD_HINT
#define SIMT_STORE_HINT(name)       \
  template <class T, class U>       \
  inline void name(T* p, U value) { \
    *p = static_cast<T>(value);     \
  }
SIMT_STORE_HINT(__stwb)
SIMT_STORE_HINT(__stcg)
SIMT_STORE_HINT(__stcs)
SIMT_STORE_HINT(__stwt)
#undef SIMT_STORE_HINT

// --- integer and float intrinsics (same results as the GPU's for finite
// inputs; the fast-math ones are computed exactly, not approximately).
inline int min(int a, int b) {
  return a < b ? a : b;
}
inline int max(int a, int b) {
  return a > b ? a : b;
}
inline unsigned int min(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline unsigned int max(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
inline long long min(long long a, long long b) {
  return a < b ? a : b;
}
inline long long max(long long a, long long b) {
  return a > b ? a : b;
}
inline unsigned long long min(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
inline unsigned long long max(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}
inline double min(double a, double b) {
  return std::fmin(a, b);
}
inline double max(double a, double b) {
  return std::fmax(a, b);
}
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
inline float __fdividef(float x, float y) {
  return x / y;
}
inline float __expf(float x) {
  return std::exp(x);
}
inline float __exp10f(float x) {
  return std::pow(10.0f, x);
}
inline float __logf(float x) {
  return std::log(x);
}
inline float __log2f(float x) {
  return std::log2(x);
}
inline float __sinf(float x) {
  return std::sin(x);
}
inline float __cosf(float x) {
  return std::cos(x);
}
inline float __tanf(float x) {
  return std::tan(x);
}
inline float __powf(float x, float y) {
  return std::pow(x, y);
}
inline float __saturatef(float x) {
  return x < 0.f ? 0.f : (x > 1.f ? 1.f : x);
}
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
inline float __frcp_rn(float x) {
  return 1.0f / x;
}
inline float __fsqrt_rn(float x) {
  return std::sqrt(x);
}
inline int __float2int_rn(float x) {
  return static_cast<int>(std::nearbyint(x));
}
inline int __float2int_rz(float x) {
  return static_cast<int>(x);
}
inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}
inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, 4);
  return i;
}
inline unsigned int __float_as_uint(float x) {
  unsigned int i;
  std::memcpy(&i, &x, 4);
  return i;
}
inline float __int_as_float(int i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
inline float __uint_as_float(unsigned int i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
inline int __popc(unsigned int x) {
  return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) {
  return __builtin_ffs(x);
}
inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
inline int __mul24(int a, int b) {
  return a * b;
}
inline unsigned int __umul24(unsigned int a, unsigned int b) {
  return a * b;
}
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) * b) >> 32);
}
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}

// clock() and friends count nothing meaningful in CPU mode.
long long int clock64();

namespace simt {
// The dynamic shared memory of the running block (extern __shared__ arrays).
void* dynamic_shared_memory();
// Storage for one static __shared__ variable; called once per declaration.
void* shared_storage(std::size_t bytes, std::size_t align);
template <class T>
inline T& shared_var(std::size_t align = alignof(T)) {
  return *static_cast<T*>(shared_storage(sizeof(T), align > alignof(T) ? align : alignof(T)));
}
}  // namespace simt
