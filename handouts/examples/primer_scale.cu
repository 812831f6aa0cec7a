// The CUDA primer's example (handouts/00_cuda_primer.md): two small kernels
// and their launchers, shaped like the labs' files, and a main() that plays
// the harness's part (device buffers, copies, checking the result).
//
//   scale_kernel      y[i] = a * x[i]: one thread per element, the global
//                     index and the boundary check
//   block_sum_kernel  each block adds up its BLOCK elements of x in shared
//                     memory: __shared__, __syncthreads() and why every
//                     thread must reach it
//
// Build and run it in CPU mode (no GPU needed), from the repository's root:
//   ninja -C build handouts/primer_scale-cpu && build/handouts/primer_scale-cpu
// and on a machine with a GPU:
//   ninja -C build handouts/primer_scale && build/handouts/primer_scale
#include <cstdio>
#include <exception>
#include <vector>

#include "cudalab/lab.cuh"  // CUDA_CHECK, cudalab::ceil_div: what a lab's file includes

// ---------------------------------------------------------------------------
// Parameters

// Threads per block: a multiple of the warp size (32), at most 1024.
constexpr int BLOCK = 256;
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "a block is whole warps of 32 threads, at most 1024");

// ---------------------------------------------------------------------------
// Kernels

// One thread per element. The grid is rounded up to whole blocks, so the last
// block may have threads past the end of x: they must not touch memory.
__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's element
  if (i == 0) printf("scale_kernel: %u blocks of %u threads\n", gridDim.x, blockDim.x);
  if (i < n) y[i] = a * x[i];
}

// Block b writes the sum of x[b * BLOCK ... b * BLOCK + BLOCK - 1] (the part
// that lies inside x) to sums[b]. Thread 0 adds up what all the threads of
// its block loaded: it reads shared memory that other threads wrote, so it
// must wait until they have written it. (Lab 5 does this sum with a tree, in
// parallel.)
__global__ void block_sum_kernel(const float* __restrict__ x, float* __restrict__ sums, int n) {
  __shared__ float buf[BLOCK];  // one array per block, seen by all its threads

  const int i = blockIdx.x * BLOCK + threadIdx.x;
  // Past the end of x a thread stores 0 instead of returning: it must still
  // reach the __syncthreads() below with the rest of its block.
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();  // every thread's element is in buf before thread 0 reads it

  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int k = 0; k < BLOCK; ++k) s += buf[k];
    sums[blockIdx.x] = s;
  }
}

// ---------------------------------------------------------------------------
// Launchers: what a lab's tests call, with device pointers they allocated.

void scale(const float* x, float* y, float a, int n) {
  const dim3 block(BLOCK);                       // threads per block (x, y, z: here 1-D)
  const dim3 grid(cudalab::ceil_div(n, BLOCK));  // enough blocks to cover n: rounded up
  scale_kernel<<<grid, block>>>(x, y, a, n);
}

// sums must hold cudalab::ceil_div(n, BLOCK) floats.
void block_sum(const float* x, float* sums, int n) {
  block_sum_kernel<<<cudalab::ceil_div(n, BLOCK), BLOCK>>>(x, sums, n);  // plain ints work as 1-D dim3
}

// ---------------------------------------------------------------------------
// What the labs' harness does for you: device buffers, copies, checks.

int main() {
  try {
    const int n = 1000;  // not a multiple of BLOCK: the last block is partial
    const int blocks = cudalab::ceil_div(n, BLOCK);
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 10);  // small integers: exact sums

    // Device memory: the kernels can read only this, host code cannot.
    float *d_x = nullptr, *d_y = nullptr, *d_sums = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_sums, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    scale(d_x, d_y, 2.0f, n);
    CUDA_CHECK(cudaGetLastError());       // a launch that could not start (bad grid or block)
    CUDA_CHECK(cudaDeviceSynchronize());  // a kernel that failed while running
    block_sum(d_x, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<float> y(n), sums(blocks);
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_sums));

    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += y[i] != 2.0f * x[i];
    std::printf("scale: y[0..3] = %g %g %g %g, y[%d] = %g, %d wrong\n", y[0], y[1], y[2], y[3], n - 1,
                y[n - 1], wrong);
    float total = 0.0f;
    for (int b = 0; b < blocks; ++b) {
      float expected = 0.0f;
      for (int i = b * BLOCK; i < n && i < (b + 1) * BLOCK; ++i) expected += x[i];
      std::printf("block_sum: block %d: %g (expected %g)\n", b, sums[b], expected);
      wrong += sums[b] != expected;
      total += sums[b];
    }
    std::printf("block_sum: total %g\n%s\n", total, wrong ? "WRONG" : "OK");
    return wrong ? 1 : 0;
  } catch (const std::exception& e) {  // CUDA_CHECK throws cudalab::CudaError
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
