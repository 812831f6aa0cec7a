// simt's launch errors and execution errors: CUDA's codes and strings.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cassert>
#include <cstdint>
#include <cstring>
#include <string>

#include "simt/simt.h"
#include "util.h"

namespace {

__global__ void touch(int* out) {
  if (out) out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

__global__ void uses_dynamic(float* out) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

__global__ void big_static(float* out) {
  __shared__ float tile[10 * 1024];  // 40 KiB
  tile[threadIdx.x] = 2.0f;
  out[threadIdx.x] = tile[threadIdx.x];
}

// A tile of 32 x 33 floats loaded by 32 x 8 threads, as lab 04's transpose,
// whose loop steps by `step` rows: by 1 it writes rows 32 to 38 too.
__global__ void tile_rows(const float* in, float* out, int step) {
  __shared__ float tile[32][33];
  for (int j = 0; j < 32; j += step) tile[threadIdx.y + j][threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void dynamic_rows(float* out, int rows) {
  extern __shared__ float dyn[];
  for (int j = 0; j < rows; ++j) dyn[j * 32 + threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = dyn[threadIdx.x];
}

__global__ void wild_write(float* p, long long offset) { p[offset + threadIdx.x] = 1.0f; }

__global__ void wild_read_after(const float* p, int from, float* out) { out[threadIdx.x] = p[from + threadIdx.x]; }

__global__ void null_read(const float* p, float* out) { out[threadIdx.x] = p[threadIdx.x + 8]; }

__global__ void asserts(int* out) {
  assert(threadIdx.x < 40);
  out[threadIdx.x] = 1;
}

__device__ int deep(int n) {
  volatile char pad[4096];
  pad[n % 4096] = static_cast<char>(n);
  return n == 0 ? pad[0] : deep(n - 1) + pad[n % 4096];
}

__global__ void recurse(int* out, int n) { out[threadIdx.x] = deep(n); }

void clear() {
  simt::reset_errors_for_tests();
  cudaGetLastError();
}

}  // namespace

TEST_CASE("error names and strings are CUDA's") {
  CHECK(std::string(cudaGetErrorString(cudaErrorInvalidConfiguration)) == "invalid configuration argument");
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidConfiguration)) == "cudaErrorInvalidConfiguration");
  CHECK(std::string(cudaGetErrorString(cudaErrorInvalidValue)) == "invalid argument");
  CHECK(std::string(cudaGetErrorString(cudaErrorIllegalAddress)) == "an illegal memory access was encountered");
  CHECK(std::string(cudaGetErrorString(cudaErrorAssert)) == "device-side assert triggered");
  CHECK(std::string(cudaGetErrorString(cudaSuccess)) == "no error");
  CHECK(cudaErrorIllegalAddress == 700);
  CHECK(cudaErrorInvalidConfiguration == 9);
}

// CUDA 13 on an H100 gave cudaErrorInvalidValue for every bad configuration
// below (2026-11-22), not cudaErrorInvalidConfiguration as older CUDA did.
TEST_CASE("a block of more than 1024 threads is an invalid argument (CUDA 13), and not sticky") {
  clear();
  DeviceBuffer<int> out(2048);
  touch<<<1, 1025>>>(out.get());
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);  // read once, then cleared
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("1025 threads"));
  touch<<<dim3(1), dim3(32, 33)>>>(out.get());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  touch<<<dim3(1), dim3(1, 1, 65)>>>(out.get());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  touch<<<1, 0>>>(out.get());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  // Nothing ran, and the next launch works.
  touch<<<2, 1024>>>(out.get());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("a grid dimension of 0 or a grid too tall is an invalid argument (CUDA 13)") {
  clear();
  DeviceBuffer<int> out(16);
  const int n = 10;
  touch<<<n / 16, 16>>>(out.get());  // floor division: 0 blocks
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  touch<<<dim3(1, 65536), 1>>>(nullptr);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("too much shared memory: 48 KiB without cudaFuncSetAttribute, 227 KiB with") {
  clear();
  DeviceBuffer<float> out(64);
  uses_dynamic<<<1, 64, 48 * 1024 + 4>>>(out.get());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  uses_dynamic<<<1, 64, 48 * 1024>>>(out.get());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024) == cudaSuccess);
  uses_dynamic<<<1, 64, 100 * 1024>>>(out.get());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  for (float v : out.download()) CHECK(v == 1.0f);
  CHECK(cudaFuncSetAttribute(uses_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024) ==
        cudaErrorInvalidValue);
  cudaGetLastError();

  // Static and dynamic together: 40 KiB static leaves 8 KiB.
  big_static<<<1, 64, 16 * 1024>>>(out.get());
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  big_static<<<1, 64, 16 * 1024>>>(out.get());  // now known before the launch
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  big_static<<<1, 64, 4 * 1024>>>(out.get());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("an access far outside any allocation is an illegal address, reported at synchronisation, sticky") {
  clear();
  DeviceBuffer<float> out(256);
  wild_write<<<1, 32>>>(out.get(), 1LL << 32);  // 16 GiB away
  CHECK(cudaGetLastError() == cudaSuccess);  // the launch itself was fine
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("thread (0,0,0) of block (0,0,0) wrote to address"));
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("in wild_write (launched at"));
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("test_launch.cu:51"));  // wild_write
  // Sticky: everything fails from now on, as after a lost CUDA context.
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 16) == cudaErrorIllegalAddress);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  touch<<<1, 1>>>(nullptr);
  CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
  clear();
  // Outside the address space altogether (a general-protection fault).
  wild_write<<<1, 32>>>(out.get(), 1LL << 46);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("outside the address space"));
  clear();
}

TEST_CASE("a little past the end of an allocation is no fault, as on a GPU; a megabyte past is") {
  clear();
  DeviceBuffer<float> out(1024);
  wild_write<<<1, 32>>>(out.get(), 1024);  // the 32 floats after the end
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  DeviceBuffer<float> fresh(1024), got(64);
  fresh.fill(3);
  wild_read_after<<<1, 64>>>(fresh.get(), 1000, got.get());
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  const auto g = got.download();
  CHECK(g[23] == 3.0f);
  CHECK(std::isnan(g[24]));  // past the end: garbage, as a GPU reads garbage
  // simt's slack word, which the harness reads as a load past the end
  // (kDeviceSlackNan, cudalab/buffer.h): not the outputs' fill 0xFFFFFFFF.
  std::uint32_t bits;
  std::memcpy(&bits, &g[24], 4);
  CHECK(bits == 0x7FF4D1A0u);
  CHECK(std::isnan(g[63]));
  wild_write<<<1, 32>>>(out.get(), 1024 + (1 << 20) / 4);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("bytes past the end of a 4096-byte allocation"));
  clear();
  null_read<<<1, 32>>>(nullptr, out.get());
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("read from address 0x20"));
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("null pointer"));
  clear();
}

TEST_CASE("a store past the end of a kernel's shared memory is an illegal address that names the overrun") {
  // An unseen transpose whose load loop stepped by 1 instead of BLOCK_ROWS
  // passed every check in CPU mode: its stores past the tile landed in the
  // arena's unused space (2026-11-25).
  clear();
  DeviceBuffer<float> in(32), out(256);
  tile_rows<<<1, dim3(32, 8)>>>(in.get(), out.get(), 8);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  tile_rows<<<2, dim3(32, 8)>>>(in.get(), out.get(), 1);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  const std::string what = simt::last_error_detail();
  INFO(what);
  CHECK_THAT(what, Catch::Contains("in tile_rows (launched at") &&
                       Catch::Contains("threads of block (0, 0, 0) wrote past the end of the kernel's static "
                                       "__shared__ variables (4224 bytes)") &&
                       Catch::Contains("up to 920 bytes past the end"));  // rows 32 to 38: (38 * 33 + 32) * 4 - 4224
  clear();
  // Dynamic shared memory: a launch that asks for 4 rows and stores 5.
  dynamic_rows<<<1, 32, 4 * 32 * sizeof(float)>>>(out.get(), 4);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  dynamic_rows<<<1, 32, 4 * 32 * sizeof(float)>>>(out.get(), 5);
  CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  CHECK_THAT(simt::last_error_detail(),
             Catch::Contains("wrote past the end of the kernel's dynamic shared memory (512 bytes)"));
  clear();
}

TEST_CASE("a failed assert in a kernel is cudaErrorAssert, not the end of the program") {
  clear();
  DeviceBuffer<int> out(64);
  asserts<<<1, 64>>>(out.get());
  CHECK(cudaDeviceSynchronize() == cudaErrorAssert);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("thread (40,0,0)"));
  clear();
}

TEST_CASE("a thread that overflows its stack stops the kernel with a stack error") {
  clear();
  DeviceBuffer<int> out(4);
  recurse<<<1, 4>>>(out.get(), 100000);
  CHECK(cudaDeviceSynchronize() == cudaErrorHardwareStackError);
  CHECK_THAT(simt::last_error_detail(), Catch::Contains("overflowed its stack"));
  clear();
  recurse<<<1, 4>>>(out.get(), 3);  // and the fibers work again
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("copies check the device side lies in one allocation") {
  clear();
  DeviceBuffer<float> d(16);
  std::vector<float> h(32, 1.0f);
  CHECK(cudaMemcpy(d.get(), h.data(), 16 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpy(d.get(), h.data(), 17 * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(h.data(), h.data() + 16, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemset(d.get(), 0, 16 * sizeof(float)) == cudaSuccess);
  CHECK(cudaFree(h.data()) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("host code that dereferences a device pointer gets SIGSEGV, as with a GPU, and a note") {
  clear();
  DeviceBuffer<float> d(16);
  d.fill(3);
  int err[2];
  REQUIRE(pipe(err) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(err[1], 2);
    signal(SIGSEGV, SIG_DFL);  // not Catch2's handler: this child only dies
    d.fill(4);                 // device memory opens for the copy and closes again
    const float v = *static_cast<const volatile float*>(d.get());
    _exit(v == 4.0f ? 0 : 1);  // reached only if the read did not fault
  }
  close(err[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(err[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV));
  CHECK_THAT(text, Catch::Contains("host code touched device memory") && Catch::Contains("64-byte cudaMalloc"));
  // In this process the buffer still works through the runtime and in kernels.
  CHECK(d.download() == std::vector<float>(16, 3.0f));
}

TEST_CASE("the device looks like a compute capability 9.0 GPU") {
  int n = 0;
  CHECK(cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(n == 1);
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(prop.major == 9);
  CHECK(prop.maxThreadsPerBlock == 1024);
  CHECK(prop.sharedMemPerBlock == 48 * 1024);
  int optin = 0;
  CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) == cudaSuccess);
  CHECK(optin == 227 * 1024);
  int v = 0;
  CHECK(cudaRuntimeGetVersion(&v) == cudaSuccess);
  CHECK(v == 13000);
}

namespace {

// Lab 05's load phase with cache hints, as a student may write it.
__global__ void hinted_copy(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcs(&out[i], __ldcs(&in[i]) + __ldcg(&in[i]) + __ldg(&in[i]));
}

// What the after-launch hook saw: the launch's output as the hook read it.
std::vector<int> g_seen_by_hook;
int* g_hook_reads = nullptr;
int g_hook_calls = 0;

void read_after_launch() {
  ++g_hook_calls;
  g_seen_by_hook.assign(4, -1);
  cudaMemcpy(g_seen_by_hook.data(), g_hook_reads, 4 * sizeof(int), cudaMemcpyDeviceToHost);
}

}  // namespace

TEST_CASE("cache-hint loads and stores (__ldcs, __ldcg, __stcs) read and write as plain ones") {
  const int n = 100;
  float *in = nullptr, *out = nullptr;
  REQUIRE(cudaMalloc(&in, n * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMalloc(&out, n * sizeof(float)) == cudaSuccess);
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  REQUIRE(cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  hinted_copy<<<4, 32>>>(in, out, n);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemcpy(host, out, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int i = 0; i < n; ++i) CHECK(host[i] == 3.0f * i);
  cudaFree(in);
  cudaFree(out);
}

TEST_CASE("the after-launch hook sees each launch's stores before the launching code goes on, and not a failed "
          "launch") {
  clear();
  DeviceBuffer<int> out(4);
  out.fill(0);
  g_hook_reads = out.get();
  g_hook_calls = 0;
  simt::set_after_launch(read_after_launch);
  touch<<<1, 4>>>(out.get());
  // The launching code writes the bytes back at once: the hook came first.
  out.fill(0);
  CHECK(g_hook_calls == 1);
  CHECK(g_seen_by_hook == std::vector<int>{1, 1, 1, 1});
  touch<<<1, 2048>>>(out.get());  // refused: no grid ran
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  CHECK(g_hook_calls == 1);
  simt::set_after_launch(nullptr);
  touch<<<1, 4>>>(out.get());
  CHECK(g_hook_calls == 1);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  clear();
}
