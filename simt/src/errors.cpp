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
cudaError_t g_last = cudaSuccess;
cudaError_t g_pending = cudaSuccess;
cudaError_t g_sticky = cudaSuccess;
std::string g_detail;
}  // namespace

cudaError_t fail(cudaError_t e) {
  if (e != cudaSuccess) g_last = e;
  return e;
}

void set_pending(cudaError_t e, const std::string& detail) {
  if (g_pending == cudaSuccess && g_sticky == cudaSuccess) g_pending = e;
  g_detail = detail;
}

void set_detail(const std::string& detail) {
  g_detail = detail;
}

cudaError_t sync_point() {
  if (g_pending != cudaSuccess) {
    g_sticky = g_pending;
    g_last = g_pending;
    g_pending = cudaSuccess;
  }
  return g_sticky;
}

cudaError_t sticky() {
  return g_sticky;
}

}  // namespace simt::detail

namespace simt {

const std::string& last_error_detail() {
  return detail::g_detail;
}

void reset_errors_for_tests() {
  detail::g_last = detail::g_pending = detail::g_sticky = cudaSuccess;
  detail::g_detail.clear();
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
  if (g_sticky != cudaSuccess) return g_sticky;
  const cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  return g_sticky != cudaSuccess ? g_sticky : g_last;
}

cudaError_t cudaDeviceSynchronize() {
  return fail(sync_point());
}

cudaError_t cudaDeviceReset() {
  // CUDA cannot recover from a sticky error either: the process must exit.
  if (cudaError_t e = sync_point()) return fail(e);
  g_last = cudaSuccess;
  return cudaSuccess;
}
