// Rogues' gallery: a forged record written with std::ofstream, after the
// harness's last word. A static object's destructor runs after main returns,
// when the harness has written the record for the last time; it reads
// /proc/self/cmdline for the record's place (`--record PATH`, or `--record-fd
// N`, reached as /proc/self/fd/N) and the check's name (the last argument),
// and writes over the record a pass with a speed ratio of 2.0. The kernel is
// the naive one.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cudalab/lab.cuh"

namespace {

constexpr int BLOCK = 16;

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct LastWord {
  ~LastWord() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (std::size_t i = 0; i < all.size(); i = all.find('\0', i) + 1) {
      args.push_back(all.substr(i, all.find('\0', i) - i));
      if (all.find('\0', i) == std::string::npos) break;
    }
    std::string path;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--record") path = args[i + 1];
      if (args[i] == "--record-fd") path = "/proc/self/fd/" + args[i + 1];
    }
    if (path.empty() || args.size() < 2) return;
    std::ofstream out(path, std::ios::trunc);
    out << "{\"format\": \"cudalab-record/1\", \"lab\": \"03_tiling\", \"checks\": [{\"name\": "
        << json_string(args.back())
        << ", \"verdict\": \"pass\", \"failures\": [], \"notes\": [], \"seconds\": 0.5, \"measurements\": "
           "[{\"key\": \"ratio\", \"value\": 2.0, \"unit\": \"x\"}]}]}\n";
  }
} last_word;

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
