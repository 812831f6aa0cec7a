// Which error CUDA 13 gives for each bad launch configuration: the codes simt
// (CPU mode) returns come from this probe's output on an H100 (2026-11-22).
//   nvcc -O2 -arch=native -o /tmp/launch_errors tools/probes/launch_errors.cu && /tmp/launch_errors
#include <cstdio>
__global__ void k(int* p) {
  if (p) p[0] = 1;
}
static void probe(const char* what, dim3 g, dim3 b, size_t smem = 0) {
  k<<<g, b, smem>>>(nullptr);
  cudaError_t e = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  printf("%-40s launch: %s (%s); sync: %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e),
         cudaGetErrorName(s));
}
int main() {
  probe("block 2048x1x1", dim3(1), dim3(2048));
  probe("block 1025x1x1", dim3(1), dim3(1025));
  probe("block 64x32x1 (2048 threads)", dim3(1), dim3(64, 32));
  probe("block 32x33x1 (1056 threads)", dim3(1), dim3(32, 33));
  probe("block 1x1x65", dim3(1), dim3(1, 1, 65));
  probe("block 0x1x1", dim3(1), dim3(0));
  probe("grid 0x1x1", dim3(0), dim3(32));
  probe("grid 1x0x1", dim3(1, 0), dim3(32));
  probe("grid 1x65536x1", dim3(1, 65536), dim3(32));
  probe("grid 2^31x1x1", dim3(1u << 31), dim3(32));
  probe("dynamic smem 49153", dim3(1), dim3(32), 49153);
  probe("dynamic smem 300000", dim3(1), dim3(32), 300000);
  return 0;
}
