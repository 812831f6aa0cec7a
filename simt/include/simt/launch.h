// simt/launch.h: the kernel launch of cudalab's CPU mode.
//
// simt_translate.py rewrites
//     kernel<<<grid, block, smem, stream>>>(a, b, c);
// into
//     ::simt::launch(::simt::Site{__FILE__, __LINE__, "kernel"},
//                    ::simt::config(grid, block, smem, stream), ::simt::kernel_address(kernel),
//                    [&](auto&&... simt_a_) { kernel(simt_a_...); }, a, b, c);
// keeping the line breaks where they were, so that __LINE__ and the debug
// information name the student's lines.
//
// As on the GPU, the arguments are evaluated once, on the host, and copied;
// each thread gets its own copy of the parameters. A launch that CUDA would
// refuse (block of more than 1024 threads, grid dimension 0, too much
// shared memory) runs nothing and sets the error cudaGetLastError returns;
// an error while the kernel runs (illegal address, failed assert) is
// reported, sticky, by the next synchronising call, as on the GPU.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda_runtime_api.h"

namespace simt {

struct Site {
  const char* file;
  int line;
  const char* kernel;  // the kernel expression as written, e.g. "transpose<32>"
};

struct Config {
  dim3 grid, block;
  std::size_t smem = 0;
  cudaStream_t stream = nullptr;
};

inline Config config(dim3 grid, dim3 block, std::size_t smem = 0, cudaStream_t stream = nullptr) {
  return Config{grid, block, smem, stream};
}

// The kernel's address: keys cudaFuncSetAttribute's limits. The translator
// passes nullptr for a function template whose arguments the call deduces.
template <class F>
inline const void* kernel_address(F* f) {
  return reinterpret_cast<const void*>(f);
}

// A host pointer among the arguments: remembered so that a launch can warn
// that the GPU would not be able to dereference it.
struct ArgInfo {
  const void* pointer;
  int index;
};

using ThreadBody = void (*)(void* closure);

// Runs the grid; returns nothing, like a launch (errors: cudaGetLastError).
void launch_erased(const Site& site, const Config& cfg, const void* kernel, ThreadBody body, void* closure,
                   const ArgInfo* pointers, int n_pointers);

namespace detail {
template <class T>
inline void collect_pointer(const T& value, int index, ArgInfo* out, int& n) {
  if constexpr (std::is_pointer_v<T>) {
    out[n++] = ArgInfo{reinterpret_cast<const void*>(value), index};
  } else {
    (void)value, (void)index, (void)out, (void)n;
  }
}
}  // namespace detail

template <class F, class... A>
inline void launch(const Site& site, const Config& cfg, const void* kernel, F&& call, A&&... args) {
  // Evaluated and copied once, on the host, as CUDA does with kernel arguments.
  std::tuple<std::decay_t<A>...> params(std::forward<A>(args)...);
  auto body = [&]() { std::apply(call, params); };
  ArgInfo pointers[sizeof...(A) + 1];
  int n = 0;
  std::apply(
      [&](const auto&... p) {
        int index = 0;
        (detail::collect_pointer(p, index++, pointers, n), ...);
      },
      params);
  launch_erased(
      site, cfg, kernel, [](void* closure) { (*static_cast<decltype(body)*>(closure))(); }, &body, pointers,
      n);
}

}  // namespace simt
