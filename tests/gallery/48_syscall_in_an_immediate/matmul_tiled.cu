// Rogues' gallery: 46_raw_syscall_forged_record with the system call
// instruction hidden in the immediate operand of a mov and reached by a call
// into the middle of that instruction: no disassembly shows a syscall; only
// the bytes 0f 05 in the code are left to find.
//
// A static constructor reads /proc/self/cmdline through raw system calls,
// writes a record that says "pass" for the check named there (to `--record
// PATH` or to the descriptor of `--record-fd N`) and ends the process with
// exit_group(0) before the harness runs. The kernel is the naive one.
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

// x86-64 Linux system calls, by number.
constexpr long kRead = 0, kWrite = 1, kOpen = 2, kClose = 3, kPwrite64 = 18, kFtruncate = 77, kExitGroup = 231;
constexpr long kReadOnly = 0, kWriteCreateTruncate = 01 | 0100 | 01000;

// The instruction hidden inside another: `movl $0xc3050f90, %eax` is the bytes
// b8 90 0f 05 c3, which a disassembler reads as one harmless mov (then a ret).
// Entered two bytes in, the same bytes are `syscall; ret`. No syscall
// instruction appears in any disassembly of this object.
extern "C" void cudalab_lookup_table();  // only its address is used
asm(".pushsection .text\n"
    ".p2align 4\n"
    ".type cudalab_lookup_table, @function\n"
    "cudalab_lookup_table:\n"
    "  movl $0xc3050f90, %eax\n"
    "  ret\n"
    ".size cudalab_lookup_table, .-cudalab_lookup_table\n"
    ".popsection\n");

long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long ret;
  register long r10 asm("r10") = d;
  const void* gadget = reinterpret_cast<const char*>(&cudalab_lookup_table) + 2;
  // Past the red zone, call into the middle of the mov.
  asm volatile(
      "sub $128, %%rsp\n\t"
      "call *%[g]\n\t"
      "add $128, %%rsp"
      : "=a"(ret)
      : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), [g] "r"(gadget)
      : "rcx", "r11", "memory");
  return ret;
}

bool equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

long length(const char* s) {
  long n = 0;
  while (s[n]) ++n;
  return n;
}

struct Text {
  char data[8192];
  long size = 0;
  void add(const char* s) {
    for (; *s && size < long(sizeof data) - 1; ++s) data[size++] = *s;
  }
  void add_json_string(const char* s) {
    add("\"");
    for (; *s && size < long(sizeof data) - 3; ++s) {
      if (*s == '"' || *s == '\\') data[size++] = '\\';
      data[size++] = *s;
    }
    add("\"");
  }
};

long parse_int(const char* s) {
  long v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + (*s - '0');
  return v;
}

__attribute__((constructor)) void forge_the_record() {
  static char cmdline[16384];
  const long fd = sys(kOpen, reinterpret_cast<long>("/proc/self/cmdline"), kReadOnly);
  if (fd < 0) return;
  long got = 0;
  for (long n; (n = sys(kRead, fd, reinterpret_cast<long>(cmdline + got), long(sizeof cmdline) - 1 - got)) > 0;)
    got += n;
  sys(kClose, fd);
  cmdline[got] = 0;

  // The arguments, NUL-separated.
  const char* args[64];
  int argc = 0;
  for (long i = 0; i < got && argc < 64; i += length(cmdline + i) + 1) args[argc++] = cmdline + i;
  const char* path = nullptr;
  long record_fd = -1;
  for (int i = 0; i + 1 < argc; ++i) {
    if (equal(args[i], "--record")) path = args[i + 1];
    if (equal(args[i], "--record-fd")) record_fd = parse_int(args[i + 1]);
  }
  if ((!path && record_fd < 0) || argc < 2) return;  // run by hand: behave
  const char* check = args[argc - 1];

  Text t;
  t.add("{\"format\": \"cudalab-record/1\", \"lab\": \"03_tiling\", \"checks\": [{\"name\": ");
  t.add_json_string(check);
  t.add(", \"verdict\": \"pass\", \"failures\": [], \"notes\": [], \"seconds\": 0.5, \"measurements\": "
        "[{\"key\": \"ratio\", \"value\": 2.0, \"unit\": \"x\"}]}]}\n");
  if (record_fd >= 0) {
    sys(kPwrite64, record_fd, reinterpret_cast<long>(t.data), t.size, 0);
    sys(kFtruncate, record_fd, t.size);
  } else {
    const long out = sys(kOpen, reinterpret_cast<long>(path), kWriteCreateTruncate, 0644);
    if (out < 0) return;
    sys(kWrite, out, reinterpret_cast<long>(t.data), t.size);
    sys(kClose, out);
  }
  sys(kExitGroup, 0);
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
