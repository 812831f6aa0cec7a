// simt/src/memory.cpp: device memory as host memory.
//
// Each allocation is its own mapping: the data (256-byte aligned, like
// cudaMalloc's), accessible slack around it (64 KiB before, 1 MiB after,
// filled with kSlackWord, a NaN as float), and inaccessible 64 KiB fences
// beyond. So, as on a GPU, a kernel that runs a little past its data (a
// missing boundary check) reads garbage and writes where nobody looks,
// without a fault, and the harness's guard zones see its writes; one that
// strays far (a wrong index, a host or freed pointer) faults, and the
// scheduler turns the fault into cudaErrorIllegalAddress. (A GPU maps memory
// in 2 MiB pages, so small overruns do not fault there either.) Copies check
// that the device side lies inside one allocation (cudaErrorInvalidValue).
//
// cudaMalloc'd memory (data and slack) is mapped PROT_NONE while host code
// runs, and opens only during a launch or a runtime copy (DeviceAccess): host
// code that dereferences a device pointer gets SIGSEGV, as it does with a
// GPU, and a one-line note saying which allocation it touched. Managed and
// pinned host memory stay open.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "internal.h"

namespace simt::detail {

namespace {

constexpr std::size_t kFence = 64 * 1024;
constexpr std::size_t kSlackBefore = 64 * 1024;
constexpr std::size_t kSlackAfter = 1024 * 1024;

struct Mapping {
  Allocation alloc;
  void* map_base = nullptr;
  std::size_t map_bytes = 0;
  unsigned char* open_base = nullptr;  // slack + data + slack: what DeviceAccess opens
  std::size_t open_bytes = 0;
};

// Device memory outlives launches, as on a GPU: allocations stay until
// cudaFree, and the kernels of every launch see them.
struct DeviceMemory {
  std::map<std::uintptr_t, Mapping> allocations;  // by the address cudaMalloc returned
  const Allocation* cache = nullptr;              // the last one find_allocation() found
  std::size_t in_use = 0;                         // bytes, for cudaMemGetInfo
  int access_depth = 0;                           // DeviceAccess nesting: > 0 while device memory is open
  // The SIGSEGV handler the host-fault note passes a fault on to.
  struct sigaction prev_segv {};
};

// A function's static: cudaMalloc may run during another file's static
// initialisation.
DeviceMemory& memory() {
  static DeviceMemory m;
  return m;
}

std::map<std::uintptr_t, Mapping>& allocations() {
  return memory().allocations;
}

void protect(const Mapping& m, bool open) {
  if (m.alloc.kind != 0) return;
  mprotect(m.open_base, m.open_bytes, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

// A fault outside a kernel on closed device memory: say so, then let the
// previous handler (Catch2's, or the default) take the repeated fault.

void on_host_fault(int sig, siginfo_t* info, void* uctx) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const auto& [base, m] : allocations()) {
    const auto lo = reinterpret_cast<std::uintptr_t>(m.open_base);
    if (m.alloc.kind != 0 || addr < lo || addr >= lo + m.open_bytes) continue;
    char buf[320];
    const int n = std::snprintf(
        buf, sizeof buf,
        "cudalab CPU mode: host code touched device memory at 0x%" PRIxPTR
        " (in or beside a %zu-byte cudaMalloc allocation): the host cannot dereference a device pointer, "
        "on a GPU either; copy the data with cudaMemcpy\n",
        addr, m.alloc.bytes);
    if (n > 0) (void)!write(2, buf, static_cast<std::size_t>(n) < sizeof buf ? n : sizeof buf - 1);
    break;
  }
  sigaction(sig, &memory().prev_segv, nullptr);
  (void)uctx;  // returning repeats the fault under the previous handler
}

// Put the note in front of whatever handles SIGSEGV now. Called whenever
// device memory closes, because a test framework may swap its handlers in
// and out around each test.
void ensure_host_fault_note() {
  struct sigaction now {};
  if (sigaction(SIGSEGV, nullptr, &now) != 0) return;
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_host_fault) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_host_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  memory().prev_segv = now;
  sigaction(SIGSEGV, &sa, nullptr);
}

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// What cudaMemGetInfo calls the device's memory: half the host's, at most 80 GB.
std::size_t device_memory() {
  static const std::size_t total = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    std::size_t host = pages > 0 ? static_cast<std::size_t>(pages) * page_size() : (std::size_t{8} << 30);
    std::size_t t = host / 2;
    return t > (std::size_t{80} << 30) ? (std::size_t{80} << 30) : t;
  }();
  return total;
}

}  // namespace

void fill_word(void* at, std::size_t bytes, std::uint32_t word) {
  auto* p = static_cast<unsigned char*>(at);
  for (std::size_t i = 0; i < bytes && (reinterpret_cast<std::uintptr_t>(p + i) & 3); ++i)
    p[i] = word_byte(p + i, word);
  std::size_t i = (4 - (reinterpret_cast<std::uintptr_t>(p) & 3)) & 3;
  for (; i + 4 <= bytes; i += 4) std::memcpy(p + i, &word, 4);
  for (; i < bytes; ++i) p[i] = word_byte(p + i, word);
}

namespace {

cudaError_t allocate(void** ptr, std::size_t bytes, int kind) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (!ptr) return fail(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  DeviceMemory& mem = memory();
  if (bytes > device_memory() || mem.in_use + bytes > device_memory()) return fail(cudaErrorMemoryAllocation);
  const std::size_t page = page_size();
  const std::size_t data = (bytes + page - 1) / page * page;
  const std::size_t open = kSlackBefore + data + kSlackAfter;
  const std::size_t total = open + 2 * kFence;
  void* base = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
  auto* first = static_cast<unsigned char*>(base) + kFence;
  if (mprotect(first, open, PROT_READ | PROT_WRITE) != 0) {
    munmap(base, total);
    return fail(cudaErrorMemoryAllocation);
  }
  unsigned char* user = first + kSlackBefore;
  fill_word(first, kSlackBefore, kSlackWord);
  fill_word(user + bytes, open - kSlackBefore - bytes, kSlackWord);
  Mapping m;
  m.alloc = Allocation{reinterpret_cast<std::uintptr_t>(user), bytes, kind};
  m.map_base = base;
  m.map_bytes = total;
  m.open_base = first;
  m.open_bytes = open;
  if (mem.access_depth == 0) protect(m, false);
  if (kind == 0 && mem.access_depth == 0) ensure_host_fault_note();
  mem.allocations[m.alloc.base] = m;
  mem.cache = nullptr;
  mem.in_use += bytes;
  *ptr = user;
  return cudaSuccess;
}

cudaError_t release(void* ptr, bool host) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (!ptr) return cudaSuccess;
  DeviceMemory& mem = memory();
  auto it = mem.allocations.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == mem.allocations.end() || (it->second.alloc.kind == 2) != host) return fail(cudaErrorInvalidValue);
  munmap(it->second.map_base, it->second.map_bytes);
  mem.in_use -= it->second.alloc.bytes;
  mem.allocations.erase(it);
  mem.cache = nullptr;
  return cudaSuccess;
}

// True if [p, p + bytes) lies inside one allocation that the device can use.
bool device_range(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const Allocation* al = find_allocation(a);
  return al && a + bytes <= al->base + al->bytes;
}

}  // namespace

DeviceAccess::DeviceAccess() {
  if (memory().access_depth++ == 0)
    for (const auto& [base, m] : allocations()) protect(m, true);
}

DeviceAccess::~DeviceAccess() {
  if (--memory().access_depth == 0) {
    for (const auto& [base, m] : allocations()) protect(m, false);
    ensure_host_fault_note();
  }
}

const Allocation* find_allocation(std::uintptr_t addr) {
  DeviceMemory& mem = memory();
  if (mem.cache && addr - mem.cache->base < mem.cache->bytes) return mem.cache;
  auto it = mem.allocations.upper_bound(addr);
  if (it == mem.allocations.begin()) return nullptr;
  --it;
  const Allocation& a = it->second.alloc;
  if (addr - a.base >= a.bytes) return nullptr;
  mem.cache = &a;
  return &a;
}

std::string describe_address(std::uintptr_t addr) {
  char buf[256];
  auto& m = allocations();
  const Allocation* best = nullptr;
  std::uintptr_t best_distance = UINTPTR_MAX;
  for (auto& [base, mapping] : m) {
    const Allocation& a = mapping.alloc;
    const std::uintptr_t d = addr < a.base ? a.base - addr : addr - (a.base + a.bytes) + 1;
    if (d < best_distance) best_distance = d, best = &a;
  }
  if (!best || best_distance > (std::uintptr_t{1} << 30)) {
    std::snprintf(buf, sizeof buf,
                  "address 0x%" PRIxPTR ", which is not in or near any cudaMalloc allocation%s", addr,
                  addr < 65536 ? " (a null pointer, or an offset from one)" : "");
  } else if (addr < best->base) {
    std::snprintf(buf, sizeof buf,
                  "address 0x%" PRIxPTR ", %" PRIuPTR " bytes before the start of a %zu-byte allocation",
                  addr, best->base - addr, best->bytes);
  } else {
    std::snprintf(buf, sizeof buf,
                  "address 0x%" PRIxPTR ", %" PRIuPTR " bytes past the end of a %zu-byte allocation", addr,
                  addr - (best->base + best->bytes), best->bytes);
  }
  return buf;
}

cudaError_t copy_checked(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue);
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
  if ((dst_dev && !device_range(dst, bytes)) || (src_dev && !device_range(src, bytes)))
    return fail(cudaErrorInvalidValue);
  DeviceAccess open;
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

}  // namespace simt::detail

using namespace simt::detail;

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  return allocate(ptr, bytes, 0);
}
cudaError_t cudaMallocManaged(void** ptr, size_t bytes, unsigned) {
  return allocate(ptr, bytes, 1);
}
cudaError_t cudaMallocHost(void** ptr, size_t bytes) {
  return allocate(ptr, bytes, 2);
}
cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned) {
  return allocate(ptr, bytes, 2);
}
cudaError_t cudaFree(void* ptr) {
  return release(ptr, false);
}
cudaError_t cudaFreeHost(void* ptr) {
  return release(ptr, true);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return copy_checked(dst, src, bytes, kind);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t) {
  return copy_checked(dst, src, bytes, kind);
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  if (width > dpitch || width > spitch) return fail(cudaErrorInvalidPitchValue);
  DeviceAccess open;  // once for all rows: each row's copy then finds it open
  for (size_t r = 0; r < height; ++r) {
    if (cudaError_t e = copy_checked(static_cast<char*>(dst) + r * dpitch,
                                     static_cast<const char*>(src) + r * spitch, width, kind))
      return e;
  }
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (bytes == 0) return cudaSuccess;
  if (!device_range(ptr, bytes)) return fail(cudaErrorInvalidValue);
  DeviceAccess open;
  std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t) {
  return cudaMemset(ptr, value, bytes);
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (!free || !total) return fail(cudaErrorInvalidValue);
  *total = device_memory();
  *free = device_memory() - memory().in_use;
  return cudaSuccess;
}

namespace simt {

cudaError_t copy_symbol(void* symbol, size_t symbol_bytes, void* dst, const void* src, size_t count,
                        size_t offset, bool to_symbol) {
  if (cudaError_t e = sync_point()) return fail(e);
  if (offset > symbol_bytes || count > symbol_bytes - offset) return fail(cudaErrorInvalidValue);
  char* s = static_cast<char*>(symbol) + offset;
  DeviceAccess open;  // the other side may be device memory (cudaMemcpyDeviceToDevice)
  if (to_symbol)
    std::memmove(s, src, count);
  else
    std::memmove(dst, s, count);
  return cudaSuccess;
}

}  // namespace simt
