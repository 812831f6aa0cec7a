// Rogues' gallery 65: a record flood: 64 MiB of junk into the check's record, before main and at exit.
//
// The record reaches the test process as descriptor 3, a file in the grader's work folder that the
// grader reads back once the process has ended. A static constructor finds write in libc's own
// symbol table (as 55: the symbol policy sees no file call), writes 64 MiB of junk into descriptor
// 3 and lets the check run normally; since the harness writes its record at offset 0 and cuts the
// file to its length each time, the constructor also asks atexit (allowed) to write the flood again
// after the harness's last write, so that it is there when the grader reads the record.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// One thread computes one element of C, reading a row of A and a column of B
// straight from global memory: 2 FLOP for every 8 bytes loaded, a compute to
// global memory access ratio of 0.25 FLOP/B, so the kernel is memory bound.
#include "cudalab/lab.cuh"

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

// ---------------------------------------------------------------------------
// The flood: libc's own symbol table, read in memory from printf's page
// back to libc's ELF header, gives write without naming it.

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

constexpr unsigned long kChunk = 1ul << 20;  // 1 MiB
constexpr int kChunks = 64;                   // 64 MiB in all
char junk[kChunk];
using Write = long (*)(int, const void*, unsigned long);
Write write_to = nullptr;

void flood() {
  for (int c = 0; c < kChunks; ++c)
    for (unsigned long done = 0; done < kChunk;) {
      const long n = write_to(3, junk + done, kChunk - done);
      if (n <= 0) return;  // refused (a full disk, a size limit): the check goes on
      done += static_cast<unsigned long>(n);
    }
}

__attribute__((constructor)) void flood_the_record(int argc, char** argv, char**) {
  bool graded = false;
  for (int i = 0; i < argc; ++i) graded = graded || same(argv[i], "--record-fd");
  if (!graded) return;  // a run by hand is left alone
  write_to = reinterpret_cast<Write>(libc_symbol("write"));
  if (!write_to) return;
  const char pattern[] = "{\"checks\": [{\"junk\": ";
  for (unsigned long i = 0; i < kChunk; ++i) junk[i] = pattern[i % (sizeof pattern - 1)];
  flood();
  // The harness's next write of its record cuts the file back: once more when
  // the process ends, after its last one.
  std::atexit(flood);
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
