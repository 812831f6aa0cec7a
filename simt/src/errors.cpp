// simt/src/errors.cpp: CUDA's error state, with its three kinds of error:
//   - a failed call's error, returned by that call and once more by
//     cudaGetLastError (which clears it);
//   - an error while a kernel ran (illegal address, assert), which CUDA
//     reports at the next synchronising call; kernels run synchronously
//     here, so it is kept pending until then;
//   - sticky errors: once an execution error surfaced, every call returns it,
//     as CUDA does after the context is lost.
#include <cstdio>

#include "internal.h"
#include "simt/simt.h"

namespace simt::detail {

namespace {
// The error state of the process's one CUDA context: it outlives launches as
// a context does (an execution error sticks until the process ends).
struct ErrorState {
  cudaError_t last = cudaSuccess;
  cudaError_t pending = cudaSuccess;
  cudaError_t sticky = cudaSuccess;
  std::string detail;  // last_error_detail()
};
ErrorState g_errors;
}  // namespace

cudaError_t fail(cudaError_t e) {
  if (e != cudaSuccess) g_errors.last = e;
  return e;
}

void set_pending(cudaError_t e, const std::string& detail) {
  if (g_errors.pending == cudaSuccess && g_errors.sticky == cudaSuccess) g_errors.pending = e;
  g_errors.detail = detail;
}

void set_detail(const std::string& detail) {
  g_errors.detail = detail;
}

cudaError_t sync_point() {
  if (g_errors.pending != cudaSuccess) {
    g_errors.sticky = g_errors.pending;
    g_errors.last = g_errors.pending;
    g_errors.pending = cudaSuccess;
  }
  return g_errors.sticky;
}

cudaError_t sticky() {
  return g_errors.sticky;
}

}  // namespace simt::detail

namespace simt {

const std::string& last_error_detail() {
  return detail::g_errors.detail;
}

void reset_errors_for_tests() {
  detail::g_errors = detail::ErrorState{};
}

}  // namespace simt

using namespace simt::detail;

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
#define X(name, value, string) \
  case name:                   \
    return string;
#include "simt/errors.inc"
#undef X
  }
  return "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
#define X(name, value, string) \
  case name:                   \
    return #name;
#include "simt/errors.inc"
#undef X
  }
  return "unrecognized error code";
}

cudaError_t cudaGetLastError() {
  if (g_errors.sticky != cudaSuccess) return g_errors.sticky;
  const cudaError_t e = g_errors.last;
  g_errors.last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  return g_errors.sticky != cudaSuccess ? g_errors.sticky : g_errors.last;
}

cudaError_t cudaDeviceSynchronize() {
  return fail(sync_point());
}

cudaError_t cudaDeviceReset() {
  // CUDA cannot recover from a sticky error either: the process must exit.
  if (cudaError_t e = sync_point()) return fail(e);
  g_errors.last = cudaSuccess;
  return cudaSuccess;
}
