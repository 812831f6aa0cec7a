// simt/src/scheduler.cpp: runs a grid on one host thread, each CUDA thread
// a fiber.
//
// The blocks of a launch run one after another. Within a block, the
// scheduler resumes the fibers one at a time, in the schedule's order; each
// runs until it reaches a __syncthreads() or returns. When every fiber that
// has not returned waits at a barrier, the barrier opens and the next round
// begins. (Exited threads do not hold a barrier up, as on GPUs since Volta.)
//
// The default order, thread 0 first, lets one thread run a whole phase ahead
// of the others: a kernel that lacks the barrier between reading a shared
// tile and overwriting it with the next one then reads overwritten values at
// any size, where on a GPU it often passes (a tiled matmul without its second
// __syncthreads was right on an H100 up to 256^3). "random:SEED" shuffles the
// order after every barrier, and the order of the blocks.
//
// Fibers are Boost.Context's fcontext (a switch is a few instructions and
// no system call), on stacks of CUDALAB_SIMT_STACK_KB KiB (default 128) with
// an inaccessible page below each. A fault in a fiber (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL), a failed assert(), __trap() or an exception stops the
// launch: the next synchronising call returns the error CUDA would
// (cudaErrorIllegalAddress, cudaErrorAssert, ...), sticky, and
// simt::last_error_detail() says which thread did what where.
//
// State: the launch's in g_launch, a LaunchState (launch_state.h) that
// launch_erased() resets at the start of every launch; what outlives a
// launch in the Scheduler below, each part with the reason it does.
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "internal.h"
#include "launch_state.h"
#include "simt/device.h"
#include "simt/simt.h"

// --- the fiber switch.
// On x86-64, a hand-written one: Boost.Context's jump_fcontext also saves and
// restores the x87 control word and MXCSR (fnstcw/fldcw, stmxcsr/ldmxcsr),
// which perf showed as most of its cost. No fiber changes the floating-point
// environment, so simt's switch keeps only the callee-saved registers.
// Measured on this project's 2-core AMD EPYC VM, a 1000^3 tiled matmul (16x16
// tiles, 128M fiber switches): 3.65 s with this switch, 4.14 s with
// jump_fcontext. Elsewhere, and with -DSIMT_USE_BOOST_CONTEXT (link
// boost_context then), Boost.Context's.
#if defined(__x86_64__) && !defined(SIMT_USE_BOOST_CONTEXT)
namespace fctx {
using fcontext_t = void*;
struct transfer_t {
  fcontext_t fctx;
  void* data;
};
extern "C" transfer_t simt_jump_fcontext(fcontext_t to, void* data);
extern "C" void simt_fcontext_trampoline();
inline transfer_t jump_fcontext(fcontext_t to, void* data) {
  return simt_jump_fcontext(to, data);
}
// A context that, when first jumped to, calls fn(transfer_t{from, data}).
inline fcontext_t make_fcontext(void* top, std::size_t, void (*fn)(transfer_t)) {
  auto t = reinterpret_cast<std::uintptr_t>(top) & ~std::uintptr_t{15};
  auto* slots = reinterpret_cast<void**>(t - 72);  // r12 r13 r14 r15 rbx rbp ret
  for (int i = 0; i < 7; ++i) slots[i] = nullptr;
  slots[4] = reinterpret_cast<void*>(fn);
  slots[6] = reinterpret_cast<void*>(&simt_fcontext_trampoline);
  return slots;
}
}  // namespace fctx
// transfer_t simt_jump_fcontext(void* to, void* data): saves the callee-saved
// registers on this stack, switches to `to`, and returns there {from, data}.
__asm__(R"(
    .text
    .globl simt_jump_fcontext
    .type simt_jump_fcontext, @function
    .align 16
simt_jump_fcontext:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r15
    pushq %r14
    pushq %r13
    pushq %r12
    movq %rsp, %rax
    movq %rdi, %rsp
    popq %r12
    popq %r13
    popq %r14
    popq %r15
    popq %rbx
    popq %rbp
    popq %r8
    movq %rsi, %rdx
    jmp *%r8
    .cfi_endproc
    .size simt_jump_fcontext, .-simt_jump_fcontext

    .globl simt_fcontext_trampoline
    .type simt_fcontext_trampoline, @function
    .align 16
simt_fcontext_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq %rax, %rdi
    movq %rdx, %rsi
    callq *%rbx
    ud2
    .cfi_endproc
    .size simt_fcontext_trampoline, .-simt_fcontext_trampoline
)");
#else
#include <boost/context/detail/fcontext.hpp>
namespace fctx = boost::context::detail;
#endif

// The built-in variables; the kernels see them as const (simt/device.h). Not
// in LaunchState: the kernels read them as variables (launch_state.h says why).
uint3 simt_rt_thread_idx __asm__("simt_threadIdx") = {0, 0, 0};
uint3 simt_rt_block_idx __asm__("simt_blockIdx") = {0, 0, 0};
dim3 simt_rt_block_dim __asm__("simt_blockDim") = dim3(1, 1, 1);
dim3 simt_rt_grid_dim __asm__("simt_gridDim") = dim3(1, 1, 1);

namespace simt::detail {

LaunchState g_launch;

std::map<const void*, int>& dynamic_smem_limits();  // device.cpp

namespace {

constexpr int kShared = 48 * 1024;
constexpr int kSharedOptin = 227 * 1024;
constexpr unsigned kMaxThreads = 1024;

enum : std::intptr_t { kBarrier = 1, kDone = 2, kFault = 3 };

enum class Order { inorder, reverse, random };

// The order of the fibers (simt.h): a setting of the process, made by
// set_schedule() or CUDALAB_SIMT_SCHEDULE, not by a launch. Its random
// generator runs on from launch to launch: "random:SEED" names one run of the
// whole program, and a kernel launched twice (the harness reruns a launch to
// tell a race) runs in two orders.
struct Schedule {
  Order kind = Order::inorder;
  std::uint64_t seed = 1;
  std::mt19937_64 rng;
  bool env_read = false;  // CUDALAB_SIMT_SCHEDULE was read
};

// The fibers' stacks: one mapping, an inaccessible page below each stack,
// made by the first launch and reused by every later one (each block makes
// its fibers afresh on them).
struct FiberStacks {
  std::size_t page = 0;
  std::size_t stack_bytes = 0;
  unsigned char* base = nullptr;
};

// Shared memory: static __shared__ variables get slots of an arena; dynamic
// shared memory is one buffer. Both are poisoned (kSharedPoisonWord, a NaN
// as float, unlike the harness's output fill: a value computed from shared
// memory no thread wrote must not read as an output never written) before
// each block: shared memory starts undefined on a GPU. A
// variable's slot is given once, while its kernel first runs (the translator
// binds a static reference to it), so the arena and each kernel's place in it
// outlive the launch that made them.
struct SharedArena {
  unsigned char* arena = nullptr;
  std::size_t arena_used = 0;
  unsigned char* dynamic = nullptr;
  std::map<const void*, std::size_t> static_bytes;  // per kernel key
  // Per kernel key: where its static __shared__ variables lie in the arena,
  // [first, second) (they are allocated while its first block runs).
  std::map<const void*, std::pair<std::size_t, std::size_t>> static_range;
};

// What launches leave for later: the harness takes the last launch's
// configuration and the first skipped barrier after its launcher ran (they
// span the launcher's launches), and a warning is given once per process.
struct Reports {
  std::string last_launch;  // take_last_launch()
  // The last launch's grid and block as numbers (last_launch_config).
  dim3 last_grid, last_block;
  bool have_config = false;
  std::string barrier_skip;  // take_barrier_skip()
  std::set<std::string> warned;
};

// The place of a __syncthreads() called without its macro (simt/device.h):
// no file, and the call's return address, which the debug information may
// name. The SyncSite first, so that a Fiber's site can point to it.
struct UnnamedSite {
  simt::SyncSite site{nullptr, 0};
  const void* pc = nullptr;
};

// What outlives a launch; one per process. reset_for_tests() forgets the
// schedule and the reports, not the stacks and the arena, which only hold
// memory (and the kernels keep references to their __shared__ slots).
struct Scheduler {
  Schedule schedule;
  FiberStacks stacks;
  SharedArena shared;
  Reports reports;
  // One UnnamedSite per return address, kept as the code they name is.
  std::map<const void*, std::unique_ptr<UnnamedSite>> unnamed;
  // The signal handler's stack while a launch runs (a fiber's may be the
  // one that overflowed).
  alignas(64) unsigned char altstack[64 * 1024];
};
Scheduler g_scheduler;

// The place that stands for a __syncthreads() called without its macro.
const simt::SyncSite* unnamed_site(const void* return_address) {
  auto& slot = g_scheduler.unnamed[return_address];
  if (!slot) slot.reset(new UnnamedSite{{nullptr, 0}, return_address});
  return &slot->site;
}

bool parse_schedule(const std::string& spec, Order& kind, std::uint64_t& seed) {
  if (spec == "inorder" || spec.empty()) {
    kind = Order::inorder;
    return true;
  }
  if (spec == "reverse") {
    kind = Order::reverse;
    return true;
  }
  if (spec == "random") {
    kind = Order::random, seed = 1;
    return true;
  }
  if (spec.rfind("random:", 0) == 0) {
    char* end = nullptr;
    const std::string n = spec.substr(7);
    seed = std::strtoull(n.c_str(), &end, 10);
    if (n.empty() || !end || *end) return false;
    kind = Order::random;
    return true;
  }
  return false;
}

Schedule& schedule_from_env() {
  Schedule& s = g_scheduler.schedule;
  if (s.env_read) return s;
  s.env_read = true;
  if (const char* env = std::getenv("CUDALAB_SIMT_SCHEDULE")) {
    if (!parse_schedule(env, s.kind, s.seed)) {
      std::fprintf(stderr,
                   "cudalab CPU mode: CUDALAB_SIMT_SCHEDULE=%s is not a schedule (inorder, reverse, "
                   "random:SEED); using inorder\n",
                   env);
      s.kind = Order::inorder;
    }
  }
  s.rng.seed(s.seed);
  return s;
}

void init_stacks() {
  FiberStacks& st = g_scheduler.stacks;
  if (st.base) return;
  st.page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t kib = 128;
  if (const char* env = std::getenv("CUDALAB_SIMT_STACK_KB")) {
    const long long v = std::atoll(env);
    if (v >= 16) kib = static_cast<std::size_t>(v);
  }
  st.stack_bytes = (kib * 1024 + st.page - 1) / st.page * st.page;
  const std::size_t slot = st.stack_bytes + st.page;
  void* p = mmap(nullptr, slot * kMaxThreads, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "cudalab CPU mode: cannot map %zu bytes of fiber stacks\n", slot * kMaxThreads);
    std::abort();
  }
  st.base = static_cast<unsigned char*>(p);
  for (unsigned i = 0; i < kMaxThreads; ++i) mprotect(st.base + i * slot, st.page, PROT_NONE);
}

// Staggered by 64 bytes a thread: tops a page apart would all fall in the
// same set of the L1 cache, and switching fibers would thrash it.
void* stack_top(unsigned i) {
  const FiberStacks& st = g_scheduler.stacks;
  return st.base + (i + 1) * (st.stack_bytes + st.page) - (i % 64) * 64;
}

bool in_stack_guard(std::uintptr_t addr) {
  const FiberStacks& st = g_scheduler.stacks;
  if (!st.base) return false;
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(st.base);
  const std::size_t slot = st.stack_bytes + st.page;
  if (addr < base || addr >= base + slot * kMaxThreads) return false;
  return (addr - base) % slot < st.page;
}

constexpr std::size_t kArenaBytes = std::size_t{64} << 20;
constexpr std::size_t kDynamicBytes = 256 * 1024;

unsigned char* map_or_die(std::size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "cudalab CPU mode: cannot map %zu bytes of %s\n", bytes, what);
    std::abort();
  }
  return static_cast<unsigned char*>(p);
}

const char* kernel_name(const LaunchState& l) {
  return l.site && l.site->kernel ? l.site->kernel : "kernel";
}

std::string where_launched(const LaunchState& l) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (launched at %s:%d)", kernel_name(l), l.site ? l.site->file : "?",
                l.site ? l.site->line : 0);
  return buf;
}

std::string thread_block(uint3 t, uint3 b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "thread (%u,%u,%u) of block (%u,%u,%u)", t.x, t.y, t.z, b.x, b.y, b.z);
  return buf;
}

// A fault raised by code running in a fiber (not a signal): stop the launch.
[[noreturn]] void fault_from_fiber(cudaError_t e, const std::string& what) {
  LaunchState& l = *current_launch();
  l.fault.error = e;
  l.fault.what = what;
  l.fault.thread = l.fibers[l.current].tid;
  l.fault.block = simt_rt_block_idx;
  fctx::jump_fcontext(l.scheduler_ctx, reinterpret_cast<void*>(kFault));
  __builtin_unreachable();
}

void fiber_entry(fctx::transfer_t t) {
  LaunchState& l = *current_launch();
  l.scheduler_ctx = t.fctx;
  std::string thrown;
  try {
    l.body(l.closure);
  } catch (const std::exception& e) {
    thrown = e.what();
    thrown = "threw an exception: " + thrown;
  } catch (...) {
    thrown = "threw an exception";
  }
  if (!thrown.empty()) fault_from_fiber(cudaErrorLaunchFailure, thrown);
  fctx::jump_fcontext(l.scheduler_ctx, reinterpret_cast<void*>(kDone));
  __builtin_unreachable();
}

// --- signals: a fault in a fiber ends the launch (siglongjmp restores the
// signal mask); elsewhere the previous handler (Catch2's, or the default)
// gets it.
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

void on_signal(int sig, siginfo_t* info, void* uctx) {
  LaunchState& l = *current_launch();  // installed only while a launch runs
  if (!l.in_fiber) {
    for (int i = 0; i < 4; ++i)
      if (kSignals[i] == sig) sigaction(sig, &l.old_actions[i], nullptr);
    return;  // the instruction faults again, under the previous handler
  }
  Fault& f = l.fault;
  f.sig = sig;
  f.addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  // A general-protection fault (an address outside the address space) has
  // no address and no read/write bit.
  f.no_address = sig == SIGSEGV && info->si_code == SI_KERNEL;
#if defined(__x86_64__)
  auto* uc = static_cast<ucontext_t*>(uctx);
  f.pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (sig == SIGSEGV && !f.no_address) {
    f.known_rw = true;
    f.write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  }
#else
  (void)uctx;
#endif
  f.thread = l.fibers[l.current].tid;
  f.block = simt_rt_block_idx;
  l.in_fiber = false;
  siglongjmp(l.abort, 1);
}

void install_handlers(LaunchState& l) {
  stack_t ss{};
  ss.ss_sp = g_scheduler.altstack;
  ss.ss_size = sizeof g_scheduler.altstack;
  sigaltstack(&ss, &l.old_altstack);
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &sa, &l.old_actions[i]);
}

void restore_handlers(const LaunchState& l) {
  for (int i = 0; i < 4; ++i) sigaction(kSignals[i], &l.old_actions[i], nullptr);
  if (l.old_altstack.ss_flags & SS_DISABLE || l.old_altstack.ss_sp == nullptr) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  } else {
    sigaltstack(&l.old_altstack, nullptr);
  }
}

std::string describe_signal_fault(Fault& f) {
  std::string s;
  const std::string who = thread_block(f.thread, f.block);
  const std::string line = describe_code_address(reinterpret_cast<const void*>(f.pc));
  switch (f.sig) {
    case SIGSEGV:
    case SIGBUS:
      if (in_stack_guard(f.addr)) {
        f.error = cudaErrorHardwareStackError;
        s = who +
            " overflowed its stack (deep recursion or a large local array; CPU mode gives each "
            "thread CUDALAB_SIMT_STACK_KB KiB, default 128)";
      } else if (f.no_address) {
        f.error = cudaErrorIllegalAddress;
        s = who + " accessed an address outside the address space, far from any cudaMalloc allocation";
      } else {
        f.error = cudaErrorIllegalAddress;
        s = who + (f.known_rw ? (f.write ? " wrote to " : " read from ") : " accessed ") +
            describe_address(f.addr);
      }
      break;
    case SIGFPE:
      f.error = cudaErrorLaunchFailure;
      s = who + " divided an integer by zero (a GPU gives an undefined result there; CPU mode stops)";
      break;
    default:
      f.error = cudaErrorIllegalInstruction;
      s = who + " executed an illegal instruction";
  }
  if (!line.empty()) s += " at " + line;
  return s;
}

// Past the last variable too: a read one row past a tile (`k <= TILE`, an
// unseen tiled matmul, 2026-11-25) found the arena's untouched zeros, which
// added nothing, and passed; on a GPU it reads whatever lies there.
constexpr std::size_t kSharedSlackBytes = 4096;

void poison_shared(const LaunchState& l) {
  const SharedArena& sh = g_scheduler.shared;
  if (sh.arena)
    fill_word(sh.arena, std::min(kArenaBytes, sh.arena_used + kSharedSlackBytes), kSharedPoisonWord);
  if (sh.dynamic)
    fill_word(sh.dynamic, std::min(kDynamicBytes, l.cfg.smem + kSharedSlackBytes), kSharedPoisonWord);
}

void make_order(LaunchState& l) {
  Schedule& s = g_scheduler.schedule;
  const unsigned n = l.threads;
  l.order.resize(n);
  for (unsigned i = 0; i < n; ++i) l.order[i] = s.kind == Order::reverse ? n - 1 - i : i;
  if (s.kind == Order::random) std::shuffle(l.order.begin(), l.order.end(), s.rng);
}

void warn_once(const std::string& key, const std::string& message) {
  if (!g_scheduler.reports.warned.insert(key).second) return;
  std::fprintf(stderr, "cudalab CPU mode: warning: %s\n", message.c_str());
}

// "file:line" of a __syncthreads() ("" where it was called without the
// macro and there is no debug information).
std::string site_text(const simt::SyncSite* site) {
  if (!site) return "";
  if (site->file) return std::string(site->file) + ":" + std::to_string(site->line);
  const void* pc = reinterpret_cast<const UnnamedSite*>(site)->pc;
  return describe_code_address(static_cast<const char*>(pc) - 1);
}

// "16..31, 40, 48..63": threads by their linear index, as ranges (the first
// eight, then "...").
std::string thread_ranges(const std::vector<unsigned>& ids) {
  std::string out;
  int shown = 0;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (shown++ == 8) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + std::to_string(ids[i]);
    if (j > i) out += ".." + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

// The round in which the barrier at `site` first opened; UINT_MAX if it
// has not.
unsigned first_opened(const BlockBarriers& bb, const simt::SyncSite* site) {
  for (const auto& o : bb.opened)
    if (o.site == site) return o.round;
  return UINT_MAX;
}

// A barrier that not every thread of the block reaches, in words, or "" if
// every thread that has not returned waits at this one and none of those
// that returned took part in it before. The rule (simt/README.md,
// "Barriers"): threads that return before a barrier do not hold it up, as on
// GPUs since Volta (an early `return` for threads past the data is fine).
// Threads that wait at different __syncthreads() at once, or threads that
// passed this __syncthreads() in an earlier round and have returned while
// the others wait at it again (a barrier inside an `if` in a loop, as in
// `for (s...) if (t < s) { ...; __syncthreads(); }`, or a loop whose threads
// run different numbers of rounds), show a barrier inside a branch: undefined
// on a GPU, where an H100 hung on one (a tiled matmul whose first barrier sat
// inside `if (row < M && col < N)`: tests/gallery/60_*).
// harness/include/cudalab/diagnosis.h kBarrierNotReached matches its first
// words.
std::string barrier_not_reached(const LaunchState& l) {
  const unsigned n = l.threads;
  const BlockBarriers& bb = l.barriers;
  // The waiting threads by their barrier (a few barriers at most).
  std::vector<std::pair<const simt::SyncSite*, std::vector<unsigned>>> waiting;
  std::vector<unsigned> exited;
  for (unsigned i = 0; i < n; ++i) {
    const Fiber& f = l.fibers[i];
    if (f.state == FiberState::done) {
      exited.push_back(i);
      continue;
    }
    auto w = std::find_if(waiting.begin(), waiting.end(), [&](const auto& p) { return p.first == f.site; });
    if (w == waiting.end()) w = waiting.insert(waiting.end(), {f.site, {}});
    w->second.push_back(i);
  }
  if (waiting.empty()) return "";
  // The threads that left a barrier they took part in: those that passed it.
  std::vector<unsigned> left;
  if (waiting.size() == 1 && !exited.empty() && bb.most_passed > 0) {
    const unsigned first = first_opened(bb, waiting.front().first);
    if (first != UINT_MAX)
      for (unsigned i : exited)
        if (l.fibers[i].passed > first) left.push_back(i);
  }
  if (waiting.size() == 1 && left.empty()) return "";

  // The barrier most threads wait at is "the" barrier; the others are skipped.
  auto most = waiting.begin();
  for (auto it = waiting.begin(); it != waiting.end(); ++it)
    if (it->second.size() > most->second.size()) most = it;
  const uint3 b = simt_rt_block_idx;
  const auto at = [](const std::string& line) { return line.empty() ? std::string() : " at " + line; };
  char counts[160];
  std::snprintf(counts, sizeof counts, " was reached by %zu of the %u threads of block (%u, %u, %u)",
                most->second.size(), n, b.x, b.y, b.z);
  std::string s = "a __syncthreads() that some threads never reach: the __syncthreads()" +
                  at(site_text(most->first)) + counts;
  std::vector<std::string> others;
  for (auto it = waiting.begin(); it != waiting.end(); ++it)
    if (it != most)
      others.push_back("threads " + thread_ranges(it->second) + " wait at another __syncthreads()" +
                       at(site_text(it->first)));
  if (!exited.empty()) {
    std::string e = "threads " + thread_ranges(exited) + " had finished the kernel";
    if (left.size() == exited.size())
      e += ", after passing it in an earlier round";
    else if (!left.empty())
      e += ", threads " + thread_ranges(left) + " of them after passing it in an earlier round";
    others.push_back(e);
  }
  for (std::size_t i = 0; i < others.size(); ++i)
    s += (i == 0 ? ", while " : (i + 1 == others.size() ? " and " : ", ")) + others[i];
  const dim3 bd = l.cfg.block;
  if (bd.y > 1 || bd.z > 1)
    s += bd.z > 1 ? " (threads numbered x + blockDim.x * (y + blockDim.y * z))"
                  : " (threads numbered x + blockDim.x * y)";
  s += ": a barrier inside a branch (or a loop) that not every thread of the block takes. On a GPU that is "
       "undefined behaviour: the block may hang, or its threads pass barriers they should wait at. Every "
       "thread of the block that has not returned must reach each __syncthreads(): keep it out of any `if` "
       "(or loop, or early `return`) that depends on the thread's index, and guard only the work around it "
       "(`if (t < s) sdata[t] += sdata[t + s]; __syncthreads();`)";
  return s;
}

// Opens the barrier every thread that has not returned waits at; false (and
// the launch's fault set) if not every thread reached the same one.
bool release_barrier(LaunchState& l) {
  const unsigned n = l.threads;
  BlockBarriers& bb = l.barriers;
  std::string& skip = g_scheduler.reports.barrier_skip;
  const Fiber* first_waiting = nullptr;
  bool divergent = false;
  int count = 0, arrived = 0;
  unsigned exited = 0, first_exited = 0;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = l.fibers[i];
    if (f.state == FiberState::done) {
      if (exited++ == 0) first_exited = i;
      continue;
    }
    if (!first_waiting) first_waiting = &f;
    if (f.site != first_waiting->site) divergent = true;
    count += f.predicate != 0;
    ++arrived;
    f.state = FiberState::ready;  // barrier_not_reached counts it as waiting still
  }
  if (divergent || (exited && bb.most_passed > 0)) {
    if (std::string why = barrier_not_reached(l); !why.empty()) {
      l.fault.error = cudaErrorLaunchFailure;
      l.fault.what = std::move(why);
      l.fault.block = simt_rt_block_idx;
      l.fault.whole_block = true;
      return false;
    }
  }
  bb.count = count;
  bb.arrived = arrived;
  const simt::SyncSite* site = first_waiting->site;
  if (first_opened(bb, site) == UINT_MAX) bb.opened.push_back({site, bb.rounds});
  ++bb.rounds;
  // Threads that returned while the rest of their block waits here never
  // reach this __syncthreads(): legal since Volta, and the classic cause of a
  // tile that is only partly loaded (an early return, or the tile loop inside
  // `if (row < M && col < N)`).
  if (exited && skip.empty()) {
    const std::string line = site_text(site);
    const uint3 t = l.fibers[first_exited].tid, b = simt_rt_block_idx;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "in %s, %u of the %u threads of block (%u, %u, %u) had finished the kernel (thread (%u, "
                  "%u, %u) first) without the __syncthreads()%s%s that the other %d waited at",
                  where_launched(l).c_str(), exited, n, b.x, b.y, b.z, t.x, t.y, t.z,
                  line.empty() ? "" : " at ", line.c_str(), arrived);
    skip = buf;
  }
  Schedule& s = g_scheduler.schedule;
  if (s.kind == Order::random) std::shuffle(l.order.begin(), l.order.end(), s.rng);
  return true;
}

// Runs one block; false if a fiber faulted (not by a signal: that longjmps).
bool run_block(LaunchState& l, uint3 bidx, long long linear) {
  simt_rt_block_idx = bidx;
  poison_shared(l);
  const unsigned n = l.threads;
  const dim3 bd = l.cfg.block;
  const std::size_t stack_bytes = g_scheduler.stacks.stack_bytes;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = l.fibers[i];
    f = Fiber{};
    f.ctx = fctx::make_fcontext(stack_top(i), stack_bytes, fiber_entry);
    f.tid = uint3{i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
  }
  l.barriers = BlockBarriers{};
  Schedule& s = g_scheduler.schedule;
  if (s.kind == Order::random) std::shuffle(l.order.begin(), l.order.end(), s.rng);
  const bool record = access_record_block(linear);
  if (record) access_begin_block(n);
  for (;;) {
    unsigned at_barrier = 0;
    for (unsigned k = 0; k < n; ++k) {
      const unsigned i = l.order[k];
      Fiber& f = l.fibers[i];
      if (f.state != FiberState::ready) continue;
      l.current = i;
      simt_rt_thread_idx = f.tid;
      if (record) access_set_thread(i);
      simt_access_active = record;
      l.in_fiber = true;
      const fctx::transfer_t t = fctx::jump_fcontext(f.ctx, nullptr);
      l.in_fiber = false;
      simt_access_active = 0;
      f.ctx = t.fctx;
      switch (reinterpret_cast<std::intptr_t>(t.data)) {
        case kBarrier:
          f.state = FiberState::barrier;
          ++at_barrier;
          break;
        case kDone:
          f.state = FiberState::done;
          f.passed = l.barriers.rounds;
          l.barriers.most_passed = std::max(l.barriers.most_passed, f.passed);
          break;
        default:
          return false;
      }
    }
    if (at_barrier == 0) break;
    if (!release_barrier(l)) return false;
    if (record) access_barrier();
  }
  if (record) access_end_block();
  return true;
}

// Why CUDA would refuse this launch, or cudaSuccess. CUDA 13 on an H100
// answered every bad configuration with cudaErrorInvalidValue ("invalid
// argument"): blocks of 0, 1025, 2048, 32 x 33, 64 x 32 and 1 x 1 x 65
// threads, grids of 0, 65536 tall and 2^31 wide (tools/probes/launch_errors.cu,
// 2026-11-22).
cudaError_t check_config(const Config& c, std::string& why) {
  const dim3 g = c.grid, b = c.block;
  char buf[256];
  if (g.x == 0 || g.y == 0 || g.z == 0) {
    std::snprintf(buf, sizeof buf, "the grid (%u, %u, %u) has a dimension of 0", g.x, g.y, g.z);
    why = buf;
    return cudaErrorInvalidValue;
  }
  if (g.x > 2147483647u || g.y > 65535u || g.z > 65535u) {
    std::snprintf(buf, sizeof buf, "the grid (%u, %u, %u) exceeds the limits (2^31-1, 65535, 65535)", g.x,
                  g.y, g.z);
    why = buf;
    return cudaErrorInvalidValue;
  }
  const unsigned long long threads = 1ULL * b.x * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > kMaxThreads) {
    std::snprintf(buf, sizeof buf,
                  "the block (%u, %u, %u) has %llu threads; a block has 1 to 1024 threads, at most "
                  "(1024, 1024, 64) in each dimension",
                  b.x, b.y, b.z, threads);
    why = buf;
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

cudaError_t check_shared(const LaunchState& l, std::string& why) {
  const auto& bytes = g_scheduler.shared.static_bytes;
  auto it = bytes.find(l.kernel_key);
  const std::size_t stat = it == bytes.end() ? 0 : it->second;
  int limit = kShared - static_cast<int>(stat);
  if (l.kernel_key) {
    auto lim = dynamic_smem_limits().find(l.kernel_key);
    if (lim != dynamic_smem_limits().end()) limit = lim->second;
  }
  char buf[512];
  if (stat > static_cast<std::size_t>(kShared)) {
    std::snprintf(buf, sizeof buf,
                  "%s declares %zu bytes of static __shared__ memory; a block may have 48 KiB "
                  "(nvcc refuses to compile this: \"uses too much shared data\")",
                  kernel_name(l), stat);
    why = buf;
    return cudaErrorInvalidValue;
  }
  if (l.cfg.smem > static_cast<std::size_t>(limit) ||
      stat + l.cfg.smem > static_cast<std::size_t>(kSharedOptin)) {
    std::snprintf(buf, sizeof buf,
                  "%s asks for %zu bytes of dynamic shared memory, more than its limit of %d bytes "
                  "(48 KiB less the static shared memory, unless cudaFuncSetAttribute("
                  "cudaFuncAttributeMaxDynamicSharedMemorySize) raised it, up to 227 KiB in all)",
                  kernel_name(l), l.cfg.smem, limit);
    why = buf;
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

void warn_host_pointers(const Site& site, const ArgInfo* pointers, int n) {
  for (int i = 0; i < n; ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(pointers[i].pointer);
    if (a == 0 || find_allocation(a)) continue;
    char key[600], msg[800];
    std::snprintf(key, sizeof key, "hostptr:%s:%d:%d", site.file, site.line, pointers[i].index);
    std::snprintf(msg, sizeof msg,
                  "argument %d of %s, launched at %s:%d, is the pointer 0x%" PRIxPTR
                  ", which cudaMalloc did not return: a GPU cannot use host memory that way (reading it "
                  "would be an illegal memory access). CPU mode runs the kernel anyway.",
                  pointers[i].index + 1, site.kernel, site.file, site.line, a);
    warn_once(key, msg);
  }
}

// The bytes after the running kernel's shared memory that its last block
// changed: "" if none, else what a write past the end of a __shared__ array
// did. The arena past each kernel's variables (other kernels' variables, then
// kSharedSlackBytes) and the slack after the dynamic buffer are poisoned
// before every block, so a store there shows as a changed byte. (A load
// there is not seen: it reads the poison, a NaN.)
// harness/include/cudalab/diagnosis.h kSharedOverrun matches its words.
std::string shared_overrun(const LaunchState& l, uint3 block) {
  const auto scan = [](const unsigned char* from, const unsigned char* to, std::size_t& changed,
                       std::size_t& last) {
    changed = 0, last = 0;
    for (const unsigned char* p = from; p < to; ++p)
      if (*p != word_byte(p, kSharedPoisonWord)) ++changed, last = static_cast<std::size_t>(p - from) + 1;
  };
  const SharedArena& sh = g_scheduler.shared;
  std::size_t changed = 0, last = 0, bytes = 0;
  const char* what = "";
  if (auto it = sh.static_range.find(l.kernel_key); it != sh.static_range.end() && sh.arena) {
    const std::size_t end = std::min(kArenaBytes, sh.arena_used + kSharedSlackBytes);
    scan(sh.arena + it->second.second, sh.arena + std::max(end, it->second.second), changed, last);
    bytes = it->second.second - it->second.first;
    what = "static __shared__ variables";
  }
  if (changed == 0 && sh.dynamic && l.cfg.smem > 0) {
    scan(sh.dynamic + l.cfg.smem, sh.dynamic + std::min(kDynamicBytes, l.cfg.smem + kSharedSlackBytes),
         changed, last);
    bytes = l.cfg.smem;
    what = "dynamic shared memory";
  }
  if (changed == 0) return "";
  char buf[640];
  std::snprintf(
      buf, sizeof buf,
      "threads of block (%u, %u, %u) wrote past the end of the kernel's %s (%zu bytes): %zu bytes after them "
      "changed, up to %zu bytes past the end. An index past a shared array's size: a loop over a "
      "tile that runs past it (`j++` where `j += BLOCK_ROWS` is meant, `k <= TILE`); on a GPU that "
      "is an illegal memory access, or it overwrites another shared array",
      block.x, block.y, block.z, what, bytes, changed, last);
  return buf;
}

enum GridStatus { kGridOk, kGridFault, kGridSignal, kGridShared, kGridOverrun };

// Runs every block of the launch; a signal in a fiber longjmps out of here.
GridStatus run_grid(LaunchState& l) {
  SharedArena& sh = g_scheduler.shared;
  Schedule& s = g_scheduler.schedule;
  const bool known_static = sh.static_bytes.count(l.kernel_key) != 0;
  const unsigned long long gx = l.cfg.grid.x, gy = l.cfg.grid.y, gz = l.cfg.grid.z;
  const unsigned long long blocks = gx * gy * gz;
  // random: visit the blocks in the order a*i + c (mod blocks), a coprime to blocks.
  unsigned long long a = 1, c = 0;
  if (s.kind == Order::random && blocks > 1) {
    do a = s.rng() % blocks;
    while (a == 0 || std::gcd(a, blocks) != 1);
    c = s.rng() % blocks;
  }
  install_handlers(l);
  for (unsigned long long i = 0; i < blocks; ++i) {
    const unsigned long long b =
        a == 1 && c == 0
            ? i
            : static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * i + c) % blocks);
    const uint3 bidx{static_cast<unsigned>(b % gx), static_cast<unsigned>((b / gx) % gy),
                     static_cast<unsigned>(b / (gx * gy))};
    if (!run_block(l, bidx, static_cast<long long>(b))) return kGridFault;
    if (i == 0 && !known_static) {
      // The first block allocated the kernel's static __shared__ variables.
      sh.static_bytes[l.kernel_key];
      l.static_shared.hi = reinterpret_cast<std::uintptr_t>(sh.arena) + sh.arena_used;
      if (check_shared(l, l.refused) != cudaSuccess) return kGridShared;
    }
    if (std::string why = shared_overrun(l, bidx); !why.empty()) {
      l.fault.error = cudaErrorIllegalAddress;
      l.fault.what = std::move(why);
      return kGridOverrun;
    }
  }
  return kGridOk;
}

// Marks the launch as running (current_launch()) until the scope ends.
class Running {
 public:
  explicit Running(LaunchState& l) : l_(l) { l_.running = true; }
  ~Running() { l_.running = false; }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

 private:
  LaunchState& l_;
};

}  // namespace

}  // namespace simt::detail

namespace simt {

namespace {
void (*g_after_launch)() = nullptr;
}  // namespace

void set_after_launch(void (*hook)()) {
  g_after_launch = hook;
}

bool last_launch_config(dim3& grid, dim3& block) {
  const auto& r = detail::g_scheduler.reports;
  if (!r.have_config) return false;
  grid = r.last_grid, block = r.last_block;
  return true;
}

std::string take_last_launch() {
  std::string s;
  s.swap(detail::g_scheduler.reports.last_launch);
  return s;
}

void launch_erased(const Site& site, const Config& cfg, const void* kernel, ThreadBody body, void* closure,
                   const ArgInfo* pointers, int n_pointers) {
  using namespace detail;
  if (current_launch()) {
    set_detail("a kernel launched another kernel (dynamic parallelism), which CPU mode does not simulate");
    fail(cudaErrorNotSupported);
    return;
  }
  if (cudaError_t e = sync_point()) {
    fail(e);
    return;
  }
  schedule_from_env();
  g_scheduler.reports.last_launch =
      std::string(site.kernel ? site.kernel : "kernel") + "<<<grid (" + std::to_string(cfg.grid.x) + ", " +
      std::to_string(cfg.grid.y) + ", " + std::to_string(cfg.grid.z) + "), block (" +
      std::to_string(cfg.block.x) + ", " + std::to_string(cfg.block.y) + ", " + std::to_string(cfg.block.z) +
      ")" + (cfg.smem ? ", " + std::to_string(cfg.smem) + " bytes of shared memory" : std::string()) + ">>>";
  g_scheduler.reports.last_grid = cfg.grid, g_scheduler.reports.last_block = cfg.block;
  g_scheduler.reports.have_config = true;
  std::string why;
  if (cudaError_t e = check_config(cfg, why)) {
    set_detail(std::string(site.kernel) + " at " + site.file + ":" + std::to_string(site.line) + ": " + why);
    fail(e);
    return;
  }
  LaunchState& l = g_launch;
  l.reset();
  l.site = &site;
  l.cfg = cfg;
  l.kernel_key = kernel ? kernel : static_cast<const void*>(site.kernel);
  l.body = body;
  l.closure = closure;
  l.threads = cfg.block.x * cfg.block.y * cfg.block.z;
  if (cudaError_t e = check_shared(l, why)) {
    set_detail(why);
    fail(e);
    return;
  }
  warn_host_pointers(site, pointers, n_pointers);

  init_stacks();
  SharedArena& sh = g_scheduler.shared;
  if (!sh.arena) {
    sh.arena = map_or_die(kArenaBytes, "static shared memory");
    sh.dynamic = map_or_die(kDynamicBytes, "dynamic shared memory");
    fill_word(sh.dynamic, kDynamicBytes, kSharedPoisonWord);
  }
  l.static_shared = SharedRange{reinterpret_cast<std::uintptr_t>(sh.arena),
                                reinterpret_cast<std::uintptr_t>(sh.arena) + sh.arena_used};
  l.dynamic_shared = SharedRange{reinterpret_cast<std::uintptr_t>(sh.dynamic),
                                 reinterpret_cast<std::uintptr_t>(sh.dynamic) + cfg.smem};
  l.fibers.assign(l.threads, Fiber{});
  make_order(l);
  simt_rt_block_dim = cfg.block;
  simt_rt_grid_dim = cfg.grid;
  access_begin_launch(site, cfg);

  GridStatus status;
  {
    DeviceAccess open;  // the kernel's threads may touch device memory; host code may not
    Running running(l);
    if (sigsetjmp(l.abort, 1) == 0) {
      status = run_grid(l);
    } else {
      status = kGridSignal;
    }
    restore_handlers(l);
    l.in_fiber = false;
    simt_access_active = 0;
  }
  if (status == kGridShared) {
    set_detail(l.refused);
    fail(cudaErrorInvalidValue);
    return;
  }
  if (status != kGridOk) {
    const std::string what = status == kGridSignal ? describe_signal_fault(l.fault)
                             : status == kGridOverrun || l.fault.whole_block
                                 ? l.fault.what
                                 : thread_block(l.fault.thread, l.fault.block) + " " + l.fault.what;
    const std::string msg =
        std::string(cudaGetErrorName(l.fault.error)) + " in " + where_launched(l) + ": " + what;
    std::fprintf(stderr, "cudalab CPU mode: %s\n", msg.c_str());
    set_pending(l.fault.error, msg);
    return;
  }
  if (g_after_launch) g_after_launch();
}

void set_schedule(const std::string& spec) {
  detail::Schedule& s = detail::schedule_from_env();
  if (!detail::parse_schedule(spec, s.kind, s.seed))
    throw std::invalid_argument("not a schedule: \"" + spec + "\" (inorder, reverse, random:SEED)");
  s.rng.seed(s.seed);
}

std::string take_barrier_skip() {
  std::string out;
  out.swap(detail::g_scheduler.reports.barrier_skip);
  return out;
}

std::string schedule() {
  const detail::Schedule& s = detail::schedule_from_env();
  switch (s.kind) {
    case detail::Order::inorder:
      return "inorder";
    case detail::Order::reverse:
      return "reverse";
    case detail::Order::random:
      return "random:" + std::to_string(s.seed);
  }
  return "?";
}

void reset_for_tests() {
  using namespace detail;
  if (current_launch()) throw std::logic_error("simt::reset_for_tests() inside a kernel");
  g_launch.reset();
  reset_errors_for_tests();
  g_scheduler.schedule = Schedule{};
  g_scheduler.reports = Reports{};
  simt_rt_thread_idx = simt_rt_block_idx = uint3{0, 0, 0};
  simt_rt_block_dim = simt_rt_grid_dim = dim3(1, 1, 1);
}

void* dynamic_shared_memory() {
  detail::SharedArena& sh = detail::g_scheduler.shared;
  if (!sh.dynamic) {
    sh.dynamic = detail::map_or_die(detail::kDynamicBytes, "dynamic shared memory");
    detail::fill_word(sh.dynamic, detail::kDynamicBytes, detail::kSharedPoisonWord);
  }
  return sh.dynamic;
}

void* shared_storage(std::size_t bytes, std::size_t align) {
  using namespace detail;
  SharedArena& sh = g_scheduler.shared;
  if (!sh.arena) sh.arena = map_or_die(kArenaBytes, "static shared memory");
  if (align < 16) align = 16;
  std::size_t at = (sh.arena_used + align - 1) / align * align;
  if (at + bytes > kArenaBytes) {
    std::fprintf(stderr, "cudalab CPU mode: more than %zu MiB of static __shared__ variables\n",
                 kArenaBytes >> 20);
    std::abort();
  }
  sh.arena_used = at + bytes;
  // The slack after it too: poison_shared() covered only the slack of the
  // variables before, and shared_overrun() reads it.
  fill_word(sh.arena + at, std::min(kArenaBytes - at, bytes + kSharedSlackBytes), kSharedPoisonWord);
  if (LaunchState* l = current_launch()) {
    sh.static_bytes[l->kernel_key] += bytes;
    auto [range, fresh] = sh.static_range.try_emplace(l->kernel_key, at, at + bytes);
    if (!fresh)
      range->second = {std::min(range->second.first, at), std::max(range->second.second, at + bytes)};
    l->static_shared.hi = reinterpret_cast<std::uintptr_t>(sh.arena) + sh.arena_used;
  }
  return sh.arena + at;
}

}  // namespace simt

// --- the device functions

namespace {
// Waits at the barrier at `site`. Returns the threads that gave a predicate
// other than 0, and (through `arrived`) the threads that waited.
int sync_at(const simt::SyncSite* site, int predicate, int* arrived) {
  using simt::detail::g_launch;
  if (!g_launch.in_fiber) {
    *arrived = 1;
    return predicate != 0;
  }
  simt::detail::Fiber& f = g_launch.fibers[g_launch.current];
  f.site = site;
  f.predicate = predicate;
  const fctx::transfer_t t =
      fctx::jump_fcontext(g_launch.scheduler_ctx, reinterpret_cast<void*>(simt::detail::kBarrier));
  g_launch.scheduler_ctx = t.fctx;
  *arrived = g_launch.barriers.arrived;
  return g_launch.barriers.count;
}
}  // namespace

// The plain barrier, the one every tiled kernel calls in its loop: no count.
void __syncthreads(const simt::SyncSite* site) {
  using simt::detail::g_launch;
  if (!g_launch.in_fiber) return;
  simt::detail::Fiber& f = g_launch.fibers[g_launch.current];
  f.site = site;
  f.predicate = 0;
  const fctx::transfer_t t =
      fctx::jump_fcontext(g_launch.scheduler_ctx, reinterpret_cast<void*>(simt::detail::kBarrier));
  g_launch.scheduler_ctx = t.fctx;
}
int __syncthreads_count(int predicate, const simt::SyncSite* site) {
  int arrived;
  return sync_at(site, predicate, &arrived);
}
int __syncthreads_and(int predicate, const simt::SyncSite* site) {
  int arrived;
  return sync_at(site, predicate, &arrived) == arrived;
}
int __syncthreads_or(int predicate, const simt::SyncSite* site) {
  int arrived;
  return sync_at(site, predicate, &arrived) > 0;
}

void __syncthreads() {
  int arrived;
  sync_at(simt::detail::unnamed_site(__builtin_return_address(0)), 0, &arrived);
}
int __syncthreads_count(int predicate) {
  int arrived;
  return sync_at(simt::detail::unnamed_site(__builtin_return_address(0)), predicate, &arrived);
}
int __syncthreads_and(int predicate) {
  int arrived;
  return sync_at(simt::detail::unnamed_site(__builtin_return_address(0)), predicate, &arrived) == arrived;
}
int __syncthreads_or(int predicate) {
  int arrived;
  return sync_at(simt::detail::unnamed_site(__builtin_return_address(0)), predicate, &arrived) > 0;
}

void __trap() {
  using namespace simt::detail;
  LaunchState* l = current_launch();
  if (!l || !l->in_fiber) std::abort();
  fault_from_fiber(cudaErrorLaunchFailure, "called __trap()");
}

// assert() in a kernel: the GPU's message and cudaErrorAssert, not an abort
// of the whole test program. Elsewhere glibc's own.
extern "C" void __assert_fail(const char* assertion, const char* file, unsigned int line,
                              const char* function) noexcept {
  using namespace simt::detail;
  if (LaunchState* l = current_launch(); l && l->in_fiber) {
    const uint3 t = l->fibers[l->current].tid, b = simt_rt_block_idx;
    std::fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
                 line, function, b.x, b.y, b.z, t.x, t.y, t.z, assertion);
    char buf[1024];
    std::snprintf(buf, sizeof buf, "failed assert(%s) at %s:%u", assertion, file, line);
    fault_from_fiber(cudaErrorAssert, buf);
  }
  using Real = void (*)(const char*, const char*, unsigned int, const char*);
  if (auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "__assert_fail")))
    real(assertion, file, line, function);
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, assertion);
  std::abort();
}
