// Rogues' gallery 61: the lab 2 naive kernel as lab 3's tiled one, with a forged *failing* speed record.
//
// A failing speed check still earns partial credit from its ratio, so a record that says "fail"
// and carries a ratio of 9.99x looks like a slow kernel the grader measured, not like a forgery of
// a pass. A static constructor finds write and _exit in libc's own symbol table (as 55: the symbol
// policy sees no file call), and in the traced speed run (argv holds --trace-fd) it writes that
// record for its check (the last argument) into the record's descriptor 3 and ends the process
// before the harness's main runs.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// One thread computes one element of C, reading a row of A and a column of B
// straight from global memory: 2 FLOP for every 8 bytes loaded, a compute to
// global memory access ratio of 0.25 FLOP/B, so the kernel is memory bound.
#include "cudalab/lab.cuh"

#include <elf.h>

#include <cstdint>
#include <cstdio>

// ---------------------------------------------------------------------------
// The forgery: libc's own symbol table, read in memory from printf's page
// back to libc's ELF header, gives write and _exit without naming them.

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

__attribute__((constructor)) void forge(int argc, char** argv, char**) {
  bool speed = false;
  for (int i = 0; i < argc; ++i) speed = speed || same(argv[i], "--trace-fd");
  if (!speed) return;  // the correctness checks (and a run by hand) are left alone
  using Write = long (*)(int, const void*, unsigned long);
  using Exit = void (*)(int);
  const auto write = reinterpret_cast<Write>(libc_symbol("write"));
  const auto quit = reinterpret_cast<Exit>(libc_symbol("_exit"));
  if (!write || !quit) return;
  char record[1024];
  const int n = std::snprintf(record, sizeof record,
                              "{\"format\": \"cudalab-record/1\", \"checks\": [{\"name\": \"%s\", \"verdict\": "
                              "\"fail\", \"failures\": [], \"notes\": [], \"measurements\": [{\"key\": \"ratio\", "
                              "\"value\": 9.99, \"unit\": \"x\"}]}]}\n",
                              argv[argc - 1]);
  write(3, record, static_cast<unsigned long>(n));
  quit(0);
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
