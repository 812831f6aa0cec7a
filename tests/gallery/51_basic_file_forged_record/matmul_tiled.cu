// Rogues' gallery: 50_ofstream_forged_record without a file stream.
// std::ofstream and std::ifstream are refused by name, but underneath them
// libstdc++ has std::__basic_file<char>, a thin wrapper of open, read and
// write whose name says neither "fstream" nor "filebuf". A static object's
// destructor runs after main returns, when the harness has written the record
// for the last time; it reads /proc/self/cmdline for the record's place
// (`--record PATH`, or `--record-fd N`, reached as /proc/self/fd/N) and the
// check's name (the last argument), and writes over the record a pass with a
// speed ratio of 2.0. The kernel is the naive one.
#include <bits/basic_file.h>

#include <ios>
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
    std::string all;
    {
      std::__basic_file<char> in;
      if (!in.open("/proc/self/cmdline", std::ios::in | std::ios::binary)) return;
      char buf[4096];
      for (std::streamsize n; (n = in.xsgetn(buf, sizeof buf)) > 0;) all.append(buf, static_cast<std::size_t>(n));
    }
    std::vector<std::string> args;
    for (std::size_t i = 0; i < all.size();) {
      const std::size_t end = all.find('\0', i);
      args.push_back(all.substr(i, end - i));
      if (end == std::string::npos) break;
      i = end + 1;
    }
    std::string path;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--record") path = args[i + 1];
      if (args[i] == "--record-fd") path = "/proc/self/fd/" + args[i + 1];
    }
    if (path.empty() || args.size() < 2) return;
    const std::string record =
        "{\"format\": \"cudalab-record/1\", \"lab\": \"03_tiling\", \"checks\": [{\"name\": " + json_string(args.back()) +
        ", \"verdict\": \"pass\", \"failures\": [], \"notes\": [], \"seconds\": 0.5, \"measurements\": "
        "[{\"key\": \"ratio\", \"value\": 2.0, \"unit\": \"x\"}]}]}\n";
    std::__basic_file<char> out;
    if (!out.open(path.c_str(), std::ios::out | std::ios::trunc)) return;
    out.xsputn(record.data(), static_cast<std::streamsize>(record.size()));
  }
} last_word;

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
