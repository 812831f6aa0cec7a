// Launches and declarations that simt_translate.py must rewrite, or leave
// alone, compiled and run: if this file builds and passes, the translator
// handled them. (test_translate.py checks the text it produces.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "util.h"

namespace {

template <class T, int Scale>
__global__ void scale(T* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= Scale;
}

// A template whose arguments the launch deduces.
template <typename T>
__global__ void fill(T* p, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

__global__ void add_one(int* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void count_chars(const char* s, int* out) {
  if (threadIdx.x == 0) out[0] = static_cast<int>(std::strlen(s));
}

// Several declarators, alignment, and dynamic shared memory of a vector type.
__global__ void shared_forms(float* out) {
  __shared__ float a[32], b[2][16];
  __shared__ __align__(16) float c[4];
  __shared__ int counter;
  extern __shared__ float4 dyn[];
  const int t = threadIdx.x;
  if (t == 0) counter = 0;
  a[t] = static_cast<float>(t);
  b[t / 16][t % 16] = 2.0f * t;
  if (t < 4) c[t] = 1.0f;
  if (t < 2) dyn[t] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  __syncthreads();
  atomicAdd(&counter, 1);
  __syncthreads();
  out[t] = a[31 - t] + b[(31 - t) / 16][(31 - t) % 16] + c[t % 4] + dyn[t % 2].w + static_cast<float>(counter);
  if (t == 0) out[32] = static_cast<float>(reinterpret_cast<std::uintptr_t>(&c[0]) % 16);
}

}  // namespace

namespace ns {
__global__ void qualified(int* p) { p[threadIdx.x] = 7; }
}  // namespace ns

__global__ void global_scope(int* p) { p[threadIdx.x] = 8; }

template <class T>
void launch_in_template(T* p, int n) {
  scale<T, 3><<<(n + 31) / 32, 32>>>(p, n);
}

TEST_CASE("the translator rewrites tricky launches") {
  const int n = 100;
  DeviceBuffer<int> d(n);
  d.fill(0);
  int* p = d.get();

  // A template with explicit arguments, nested parentheses and >> in the
  // configuration, and line breaks and comments everywhere.
  fill<<<dim3((n + 31) / 32), dim3(std::min(32, n))>>>(p, 2, n);
  scale<int, 5><<<(n >> 5) + 1, 32>>>(p, n);  // "<<<in a comment>>>"
  add_one
      <<< /* >>> in a comment */ (n + 63) / 64,
          64 >>>
      (p,   // the pointer
       n);
  launch_in_template(p, n);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  for (int v : d.download()) REQUIRE(v == (2 * 5 + 1) * 3);

  // A string holding <<< >>> as an argument, and a raw string.
  DeviceBuffer<int> len(1);
  const char* text = R"(kernel<<<1, 1>>>(x); __shared__ float s[4];)";
  DeviceBuffer<char> dtext(std::strlen(text) + 1);
  cudaMemcpy(dtext.get(), text, std::strlen(text) + 1, cudaMemcpyHostToDevice);
  count_chars<<<1, 1>>>(dtext.get(), len.get());
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(len.download()[0] == static_cast<int>(std::strlen("kernel<<<1, 1>>>(x); __shared__ float s[4];")));
  const char c = '<';
  CHECK(c == '<');
  CHECK(1'000 == 1000);  // a digit separator is not a character literal

  // Qualified names, a function pointer, shared memory size and a stream.
  DeviceBuffer<int> q(32);
  ns::qualified<<<1, 32>>>(q.get());
  CHECK(q.download()[31] == 7);
  ::global_scope<<<1, 32, 0>>>(q.get());
  CHECK(q.download()[31] == 8);
  void (*fp)(int*) = ns::qualified;
  (*fp)<<<1, 32>>>(q.get());
  CHECK(q.download()[0] == 7);
  cudaStream_t stream;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  global_scope<<<1, 32, 0, stream>>>(q.get());
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(q.download()[5] == 8);
}

TEST_CASE("the translator rewrites __shared__ declarations of every form") {
  DeviceBuffer<float> out(33);
  shared_forms<<<1, 32, 2 * sizeof(float4)>>>(out.get());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = out.download();
  for (int t = 0; t < 32; ++t) CHECK(got[t] == 3.0f * (31 - t) + 1.0f + 4.0f + 32.0f);
  CHECK(got[32] == 0.0f);  // __align__(16) kept
}

TEST_CASE("line numbers survive the rewriting of multi-line launches and declarations") {
  CHECK(__LINE__ == 126);
  CHECK(std::string(__FILE__).find("test_translate.cu") != std::string::npos);
}
