// Rogues' gallery 66: a check process connects to a Unix socket on the grading machine.
//
// A static constructor finds socket, connect and write in libc's own symbol table (as 55: the
// symbol policy sees no network call), connects to /tmp/cudalab-gallery-listener.sock (the
// gallery's listener: a stand-in for any local service, a database, a build cache, another
// student's process) and writes "CONNECTED" into it. It prints what happened either way, and the
// check then runs normally.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// One thread computes one element of C, reading a row of A and a column of B
// straight from global memory: 2 FLOP for every 8 bytes loaded, a compute to
// global memory access ratio of 0.25 FLOP/B, so the kernel is memory bound.
#include "cudalab/lab.cuh"

#include <elf.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

// ---------------------------------------------------------------------------
// The connection: libc's own symbol table, read in memory from printf's page
// back to libc's ELF header, gives socket, connect and write without naming them.

namespace {

bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

void* libc_symbol(const char* name) {
  auto page = reinterpret_cast<std::uintptr_t>(&std::printf) & ~std::uintptr_t{4095};
  for (int i = 0; i < (1 << 16); ++i, page -= 4096) {
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(page);
    if (eh->e_ident[0] != 0x7f || eh->e_ident[1] != 'E' || eh->e_ident[2] != 'L' || eh->e_ident[3] != 'F') continue;
    const auto* ph = reinterpret_cast<const Elf64_Phdr*>(page + eh->e_phoff);
    const Elf64_Dyn* dyn = nullptr;
    for (int p = 0; p < eh->e_phnum; ++p)
      if (ph[p].p_type == PT_DYNAMIC) dyn = reinterpret_cast<const Elf64_Dyn*>(page + ph[p].p_vaddr);
    if (!dyn) return nullptr;
    std::uintptr_t symtab = 0, strtab = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
      if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    }
    if (symtab < page) symtab += page;
    if (strtab < page) strtab += page;
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(symtab);
    for (std::size_t s = 0; reinterpret_cast<std::uintptr_t>(sym + s) < strtab; ++s)
      if (sym[s].st_value && same(reinterpret_cast<const char*>(strtab + sym[s].st_name), name))
        return reinterpret_cast<void*>(page + sym[s].st_value);
    return nullptr;
  }
  return nullptr;
}

constexpr char kListener[] = "/tmp/cudalab-gallery-listener.sock";

__attribute__((constructor)) void connect_out() {
  using Socket = int (*)(int, int, int);
  using Connect = int (*)(int, const sockaddr*, socklen_t);
  using Write = long (*)(int, const void*, unsigned long);
  const auto open_socket = reinterpret_cast<Socket>(libc_symbol("socket"));
  const auto connect_to = reinterpret_cast<Connect>(libc_symbol("connect"));
  const auto write = reinterpret_cast<Write>(libc_symbol("write"));
  if (!open_socket || !connect_to || !write) {
    std::printf("gallery 66: socket, connect or write not found in libc\n");
    return;
  }
  const int fd = open_socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    std::printf("gallery 66: socket(AF_UNIX, SOCK_STREAM) failed: errno %d\n", errno);
    return;
  }
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::memcpy(to.sun_path, kListener, sizeof kListener);
  if (connect_to(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    std::printf("gallery 66: connect(%s) failed: errno %d\n", kListener, errno);
    return;
  }
  const long n = write(fd, "CONNECTED\n", 10);
  std::printf("gallery 66: CONNECTED to %s (wrote %ld bytes)\n", kListener, n);
}

}  // namespace

// ---------------------------------------------------------------------------
// Parameters

constexpr int BLOCK = 16;
static_assert(BLOCK * BLOCK <= 1024, "a block of BLOCK x BLOCK threads: CUDA allows at most 1024");

// ---------------------------------------------------------------------------
// Kernel

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  // The grid is rounded up to whole blocks: threads past the edge do nothing.
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
