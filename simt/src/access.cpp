// simt/src/access.cpp: the access report.
//
// A translation unit compiled with simt's access flags (simt_access_args in
// simt/meson.build: GCC's -fsanitize=kernel-address with every check made a
// call, and no shadow memory) calls __asan_loadN_noabort / __asan_storeN_noabort
// before each load and store. While a recorded block runs, those calls
// note (thread, instruction, address) for addresses in device allocations
// (global) or in shared memory. The k-th execution of an instruction by the
// threads of one warp (32 consecutive threads) is one request, as on the GPU
// where the warp executes it once for all its active threads. Per request:
//   global: the distinct 32-byte sectors touched, and the ideal: the bytes
//           requested, packed (coalesced float loads: 4 and 4; a warp
//           walking down a column of floats: 32 and 4);
//   shared: the passes ("wavefronts") through the 32 banks of 4 bytes: the
//           most distinct words any bank holds, per phase (all 32 lanes for
//           accesses of up to 4 bytes, 16 for 8, 8 for 16); conflicts are
//           the passes beyond one per phase, as Nsight Compute counts them
//           (a 32-way conflict counts 31).
// Instruction addresses become source lines through addr2line (binutils) and
// the debug information (-g).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "internal.h"
#include "launch_state.h"
#include "simt/simt.h"

int simt_access_active = 0;

namespace simt::detail {

namespace {

struct Entry {
  std::uintptr_t addr;
  std::uint8_t lane, size;
};

struct Bucket {
  Space space = Space::none;
  bool store = false;
  std::uint8_t n = 0;
  Entry e[32];
};

struct Key {
  std::uintptr_t pc;
  std::uint32_t warp, k;
  bool operator==(const Key& o) const { return pc == o.pc && warp == o.warp && k == o.k; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<std::uintptr_t>()(k.pc * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(k.warp) << 32 | k.k));
  }
};

struct PcStats {
  const char* kernel = nullptr;  // as the launch wrote it
  Space space = Space::none;
  bool store = false;
  int bytes = 0;
  long long requests = 0, threads = 0, sectors = 0, ideal_sectors = 0, wavefronts = 0, ideal_wavefronts = 0;
  // Per request, the most lanes that named one address: what serializes a
  // warp's atomics on it (32: every lane adds to one counter).
  long long same_address = 0;
};

// What the report adds up over every launch until collect() reads it (or
// reset() forgets it): it outlives launches by design, and so do its
// settings.
struct AccessTotals {
  bool enabled = false;
  long long blocks_per_launch = 64;
  unsigned long long launches = 0;  // numbers each launch: its sample's hash
  std::unordered_map<std::uintptr_t, PcStats> stats;
};

// The running launch's sample: blocks fall into strata of `stratum`
// consecutive blocks, one block of each stratum is recorded (chosen by a
// hash, so an edge block has its fair chance), and it counts for its whole
// stratum. So a launch weighs by its size, as in Nsight Compute's
// whole-launch counts, and a small ragged launch does not pull a large one's
// figures. access_begin_launch() starts it afresh.
struct AccessSample {
  const char* kernel = "";
  long long blocks = 0;  // in the launch
  long long stratum = 1;
  long long weight = 1;  // the recorded block's stratum size
  // The recorded block's open requests.
  unsigned tid = 0;
  std::vector<std::unordered_map<std::uintptr_t, std::uint32_t>> counts;  // per thread: pc -> executions
  std::vector<std::uint8_t> warp_lanes;
  std::unordered_map<Key, Bucket, KeyHash> open;
};

AccessTotals g_totals;
AccessSample g_sample;

void finalize(std::uintptr_t pc, const Bucket& b) {
  PcStats& s = g_totals.stats[pc];
  if (!s.kernel) s.kernel = g_sample.kernel;
  s.space = b.space;
  s.store = b.store;
  s.requests += g_sample.weight;
  s.threads += g_sample.weight * b.n;
  {
    std::uintptr_t addrs[32];
    for (int i = 0; i < b.n; ++i) addrs[i] = b.e[i].addr;
    std::sort(addrs, addrs + b.n);
    int most = b.n ? 1 : 0;
    for (int i = 1, run = 1; i < b.n; ++i)
      most = std::max(most, run = addrs[i] == addrs[i - 1] ? run + 1 : 1);
    s.same_address += g_sample.weight * most;
  }
  if (b.space == Space::global) {
    std::uintptr_t sec[64];
    int ns = 0;
    std::pair<std::uintptr_t, std::uintptr_t> iv[32];
    for (int i = 0; i < b.n; ++i) {
      const Entry& e = b.e[i];
      s.bytes = std::max<int>(s.bytes, e.size);
      for (std::uintptr_t x = e.addr >> 5; x <= (e.addr + e.size - 1) >> 5 && ns < 64; ++x) sec[ns++] = x;
      iv[i] = {e.addr, e.addr + e.size};
    }
    std::sort(sec, sec + ns);
    s.sectors += g_sample.weight * (std::unique(sec, sec + ns) - sec);
    std::sort(iv, iv + b.n);
    std::uintptr_t bytes = 0, lo = iv[0].first, hi = iv[0].second;
    for (int i = 1; i < b.n; ++i) {
      if (iv[i].first > hi) {
        bytes += hi - lo;
        lo = iv[i].first;
        hi = iv[i].second;
      } else {
        hi = std::max(hi, iv[i].second);
      }
    }
    bytes += hi - lo;
    s.ideal_sectors += g_sample.weight * static_cast<long long>((bytes + 31) / 32);
  } else {
    int widest = 1;
    for (int i = 0; i < b.n; ++i) widest = std::max<int>(widest, b.e[i].size);
    s.bytes = std::max(s.bytes, widest);
    const int per_phase = widest <= 4 ? 32 : (widest <= 8 ? 16 : 8);
    for (int phase = 0; phase < 32 / per_phase; ++phase) {
      // words[bank]: the distinct 4-byte words this phase reads in that bank.
      std::uintptr_t words[32][64];
      int nwords[32] = {};
      bool any = false;
      for (int i = 0; i < b.n; ++i) {
        const Entry& e = b.e[i];
        if (e.lane / per_phase != phase) continue;
        any = true;
        for (std::uintptr_t w = e.addr >> 2; w <= (e.addr + e.size - 1) >> 2; ++w) {
          const int bank = static_cast<int>(w & 31);
          bool seen = false;
          for (int j = 0; j < nwords[bank]; ++j) seen |= words[bank][j] == w;
          if (!seen && nwords[bank] < 64) words[bank][nwords[bank]++] = w;
        }
      }
      if (!any) continue;
      s.wavefronts += g_sample.weight * *std::max_element(nwords, nwords + 32);
      s.ideal_wavefronts += g_sample.weight;
    }
  }
}

void flush_open() {
  for (auto& [key, bucket] : g_sample.open) finalize(key.pc, bucket);
  g_sample.open.clear();
}

void record(std::uintptr_t a, unsigned size, bool store, std::uintptr_t pc) {
  Space sp;
  const LaunchState& l = g_launch;  // recording happens only in a launch's fibers
  if (a - l.static_shared.lo < l.static_shared.hi - l.static_shared.lo ||
      a - l.dynamic_shared.lo < l.dynamic_shared.hi - l.dynamic_shared.lo) {
    sp = Space::shared;
  } else if (find_allocation(a)) {
    sp = Space::global;
  } else {
    return;  // the thread's stack, kernel parameters, host globals
  }
  const std::uint32_t k = g_sample.counts[g_sample.tid][pc]++;
  const std::uint32_t warp = g_sample.tid / 32;
  const Key key{pc, warp, k};
  Bucket& b = g_sample.open[key];
  if (b.n == 0) {
    b.space = sp;
    b.store = store;
  }
  if (b.n < 32)
    b.e[b.n++] = Entry{a, static_cast<std::uint8_t>(g_sample.tid % 32),
                       static_cast<std::uint8_t>(size > 255 ? 255 : size)};
  if (b.n == g_sample.warp_lanes[warp]) {
    finalize(pc, b);
    g_sample.open.erase(key);
  }
}

std::string tidy_path(const std::string& p);

// "void ns::k<0>(float const*, int)" -> "ns::k<0>"
std::string short_function(const std::string& f) {
  int depth = 0;
  std::size_t start = 0, end = f.size();
  for (std::size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (c == ' ' && depth == 0)
      start = i + 1;
    else if (c == '(' && depth == 0 && i > 0) {
      end = i;
      break;
    }
  }
  return start < end ? f.substr(start, end - start) : f;
}

// --- source lines
struct Where {
  std::string function, file;
  int line = 0;
  // Inside one of simt's atomic functions (device.h), inlined into the line above.
  bool atomic = false;
};

// simt's own headers (device.h: the atomics, __ldg, ...): code of theirs
// inlined into a kernel counts at the kernel's line that called it.
bool simt_header(const std::string& file) {
  return file.find("/simt/include/simt/") != std::string::npos;
}
// By code address: a cache of the debug information, good for as long as
// the process runs (simt loads no code after its start).
std::unordered_map<std::uintptr_t, Where> g_where;

int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<std::pair<std::uintptr_t, CodeLocation>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (q->first >= lo && q->first < lo + ph.p_memsz) {
      if (info->dlpi_name && *info->dlpi_name) {
        q->second.object = info->dlpi_name;
      } else {  // the executable: its real path (addr2line runs in another process)
        char path[4096];
        const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        q->second.object = n > 0 ? std::string(path, static_cast<std::size_t>(n)) : "/proc/self/exe";
      }
      q->second.offset = q->first - info->dlpi_addr;
      return 1;
    }
  }
  return 0;
}

// Looks up every address not yet known, one addr2line per object file.
void resolve(const std::vector<std::uintptr_t>& pcs) {
  std::map<std::string, std::vector<std::pair<std::uintptr_t, std::uintptr_t>>> by_object;
  for (std::uintptr_t pc : pcs) {
    if (g_where.count(pc)) continue;
    g_where[pc] = Where{};
    const CodeLocation loc = locate_code(pc);
    if (!loc.object.empty()) by_object[loc.object].push_back({pc, loc.offset});
  }
  for (auto& [object, list] : by_object) {
    // TMPDIR first: a confined check may write only its scratch folder.
    const char* dir = std::getenv("TMPDIR");
    std::string tmp_name = std::string(dir && *dir ? dir : "/tmp") + "/simt-addr2line-XXXXXX";
    char* tmp = tmp_name.data();
    const int fd = mkstemp(tmp);
    if (fd < 0) continue;
    std::string text;
    char buf[64];
    // -i prints the inlined calls too, innermost first: a 0 after each
    // address (which prints ??) marks where its lines end.
    for (auto& [pc, off] : list) {
      std::snprintf(buf, sizeof buf, "0x%" PRIxPTR "\n0\n", off);
      text += buf;
    }
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      close(fd);
      unlink(tmp);
      continue;
    }
    close(fd);
    const std::string cmd = "addr2line -C -f -i -e '" + object + "' < " + tmp + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p) {
      char fn[4096], fl[4096];
      auto pair = [&]() {
        if (!std::fgets(fn, sizeof fn, p) || !std::fgets(fl, sizeof fl, p)) return false;
        fn[std::strcspn(fn, "\n")] = 0;
        fl[std::strcspn(fl, "\n")] = 0;
        return true;
      };
      auto unknown = [&]() { return std::strcmp(fn, "??") == 0 && std::strncmp(fl, "??", 2) == 0; };
      for (auto& [pc, off] : list) {
        if (!pair()) break;
        if (unknown()) {  // no debug information: this, then the separator
          if (!pair()) break;
          continue;
        }
        const auto frame = [&] {
          Where w;
          w.function = short_function(fn);
          std::string file = fl;
          if (auto d = file.find(" (discriminator"); d != std::string::npos) file.resize(d);
          const auto colon = file.rfind(':');
          if (colon != std::string::npos && file.compare(0, 2, "??") != 0) {
            w.line = std::atoi(file.c_str() + colon + 1);
            w.file = tidy_path(file.substr(0, colon));
          }
          return w;
        };
        // Innermost first: where that is simt's own header, the first
        // frame outside it (the student's line that called atomicAdd).
        const Where inner = frame();
        Where w = inner;
        while (pair() && !unknown())
          if (simt_header(w.file)) w = frame();
        w.atomic = simt_header(inner.file) && inner.function.rfind("atomic", 0) == 0;
        g_where[pc] = w;
      }
      pclose(p);
    }
    unlink(tmp);
  }
}

// "/a/b/../c/./d" -> "/a/c/d" (lexically; the debug information joins the
// build folder and the relative name the compiler was given).
std::string tidy_path(const std::string& p) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  const bool absolute = !p.empty() && p[0] == '/';
  while (i <= p.size()) {
    const std::size_t j = std::min(p.find('/', i), p.size());
    const std::string part = p.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..")
        parts.pop_back();
      else if (!absolute)
        parts.push_back(part);
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) out += (k ? "/" : "") + parts[k];
  return out;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else
      o += c;
  }
  return o + "\"";
}

void write_report_at_exit() {
  const char* path = std::getenv("CUDALAB_SIMT_ACCESS_REPORT");
  if (!path || !*path) return;
  const auto lines = simt::access::collect();
  const std::string p = path;
  const bool json = p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0;
  const std::string text = json ? simt::access::format_json(lines) : simt::access::format_text(lines);
  if (p == "-") {
    std::fputs(text.c_str(), stderr);
    return;
  }
  if (FILE* f = std::fopen(path, "w")) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
  } else {
    std::fprintf(stderr, "cudalab CPU mode: cannot write the access report to %s\n", path);
  }
}

struct EnvInit {
  EnvInit() {
    if (const char* b = std::getenv("CUDALAB_SIMT_ACCESS_BLOCKS")) g_totals.blocks_per_launch = std::atoll(b);
    const char* path = std::getenv("CUDALAB_SIMT_ACCESS_REPORT");
    if (path && *path) {
      g_totals.enabled = true;
      std::atexit(write_report_at_exit);
    }
  }
} g_env_init;

}  // namespace

CodeLocation locate_code(std::uintptr_t pc) {
  std::pair<std::uintptr_t, CodeLocation> q{pc, {}};
  dl_iterate_phdr(find_object, &q);
  return q.second;
}

void access_begin_launch(const Site& site, const Config& cfg) {
  g_sample = AccessSample{};
  g_sample.kernel = site.kernel;
  g_sample.blocks = static_cast<long long>(cfg.grid.x) * cfg.grid.y * cfg.grid.z;
  // A launch has at least one block (check_config refuses empty grids).
  g_sample.stratum = g_totals.blocks_per_launch > 0
                         ? (g_sample.blocks + g_totals.blocks_per_launch - 1) / g_totals.blocks_per_launch
                         : 1;
  ++g_totals.launches;
}

bool access_record_block(long long block_linear) {
  if (!g_totals.enabled) return false;
  const long long stratum = block_linear / g_sample.stratum;
  const long long first = stratum * g_sample.stratum;
  const long long size = std::min(g_sample.stratum, g_sample.blocks - first);
  if (size > 1) {
    // splitmix64 of (launch, stratum): deterministic, and spread over the stratum.
    std::uint64_t z = g_totals.launches * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(stratum) + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    if (block_linear - first != static_cast<long long>(z % static_cast<std::uint64_t>(size))) return false;
  }
  g_sample.weight = size;
  return true;
}

void access_begin_block(unsigned threads) {
  if (g_sample.counts.size() < threads) g_sample.counts.resize(threads);
  for (unsigned i = 0; i < threads; ++i) g_sample.counts[i].clear();
  g_sample.warp_lanes.assign((threads + 31) / 32, 32);
  if (threads % 32) g_sample.warp_lanes.back() = static_cast<std::uint8_t>(threads % 32);
  g_sample.open.clear();
}

void access_set_thread(unsigned linear_tid) {
  g_sample.tid = linear_tid;
}
void access_barrier() {
  flush_open();
}
void access_end_block() {
  flush_open();
}

}  // namespace simt::detail

namespace simt {

std::string describe_code_address(const void* pc) {
  using namespace detail;
  const auto a = reinterpret_cast<std::uintptr_t>(pc);
  if (!a) return "";
  resolve({a});
  const Where& w = g_where[a];
  if (w.line <= 0) return "";
  // Not w.function: for inlined code addr2line names the outermost function.
  return w.file + ":" + std::to_string(w.line);
}

}  // namespace simt

namespace simt::access {

void enable(bool on) {
  detail::g_totals.enabled = on;
}
bool enabled() {
  return detail::g_totals.enabled;
}
void set_blocks_per_launch(long long blocks) {
  detail::g_totals.blocks_per_launch = blocks;
}
void reset() {
  detail::g_totals.stats.clear();
  detail::g_sample.open.clear();
}

std::vector<LineStats> collect() {
  using namespace detail;
  std::vector<std::uintptr_t> pcs;
  for (auto& [pc, s] : g_totals.stats) pcs.push_back(pc - 1);  // pc: a return address
  resolve(pcs);
  std::map<std::tuple<std::string, int, std::string, bool, bool>, LineStats> lines;
  for (auto& [pc, s] : g_totals.stats) {
    const Where& w = g_where[pc - 1];
    // An atomic is a read and a write of one word: counted once, at its read.
    if (w.atomic && s.store) continue;
    const std::string space = s.space == Space::shared ? "shared" : "global";
    LineStats& l = lines[{w.file.empty() ? "?" : w.file, w.line, space, s.store, w.atomic}];
    l.atomic = w.atomic;
    l.same_address += s.same_address;
    l.file = w.file.empty() ? "?" : w.file;
    l.line = w.line;
    if (l.function.empty()) l.function = s.kernel ? s.kernel : w.function;
    l.space = space;
    l.store = s.store;
    l.bytes = std::max(l.bytes, s.bytes);
    l.requests += s.requests;
    l.threads += s.threads;
    l.sectors += s.sectors;
    l.ideal_sectors += s.ideal_sectors;
    l.wavefronts += s.wavefronts;
    l.ideal_wavefronts += s.ideal_wavefronts;
  }
  std::vector<LineStats> out;
  for (auto& [k, l] : lines) out.push_back(l);
  return out;
}

std::string format_text(const std::vector<LineStats>& lines) {
  std::string s =
      "cudalab access report (CPU mode): memory requests per kernel source line.\n"
      "A request is one instruction executed by one warp (32 consecutive threads of a block).\n"
      "global: 32-byte sectors per request, and the ideal (the bytes asked for, packed).\n"
      "shared: bank conflicts per request (32 banks of 4 bytes; a 32-way conflict counts 31).\n"
      "Counted on a sample of each launch's blocks (CUDALAB_SIMT_ACCESS_BLOCKS, default 64, spread over\n"
      "the launch, each standing for its share of it, so counts are estimates of whole launches); no "
      "timing.\n";
  if (lines.empty()) {
    s += "No accesses were recorded: was the kernel's file compiled with simt's access flags?\n";
    return s;
  }
  char buf[1024];
  for (const auto& l : lines) {
    if (l.atomic) {
      std::snprintf(buf, sizeof buf,
                    "%s:%d  %s  %s atomic (%d B/thread)  %lld requests  %.2f lanes per address (a warp's "
                    "atomics on one address run one after another)\n",
                    l.file.c_str(), l.line, l.function.c_str(), l.space.c_str(), l.bytes, l.requests,
                    l.lanes_per_address());
    } else if (l.space == "global") {
      std::snprintf(buf, sizeof buf,
                    "%s:%d  %s  global %s (%d B/thread)  %lld requests  %.2f sectors/request (ideal %.2f)\n",
                    l.file.c_str(), l.line, l.function.c_str(), l.store ? "store" : "load", l.bytes,
                    l.requests, l.sectors_per_request(), l.ideal_sectors_per_request());
    } else {
      std::snprintf(buf, sizeof buf,
                    "%s:%d  %s  shared %s (%d B/thread)  %lld requests  %.2f bank conflicts/request\n",
                    l.file.c_str(), l.line, l.function.c_str(), l.store ? "store" : "load", l.bytes,
                    l.requests, l.conflicts_per_request());
    }
    s += buf;
  }
  return s;
}

std::string format_json(const std::vector<LineStats>& lines) {
  using detail::json_string;
  std::string s = "{\"lines\": [";
  char buf[512];
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    s += i ? ",\n  " : "\n  ";
    s += "{\"file\": " + json_string(l.file) + ", \"function\": " + json_string(l.function);
    std::snprintf(
        buf, sizeof buf,
        ", \"line\": %d, \"space\": \"%s\", \"op\": \"%s\", \"bytes\": %d, \"requests\": %lld, "
        "\"threads\": %lld, \"sectors\": %lld, \"ideal_sectors\": %lld, \"wavefronts\": %lld, "
        "\"ideal_wavefronts\": %lld, \"sectors_per_request\": %.4f, \"bank_conflicts_per_request\": %.4f, "
        "\"lanes_per_address\": %.4f}",
        l.line, l.space.c_str(), l.atomic ? "atomic" : (l.store ? "store" : "load"), l.bytes, l.requests,
        l.threads, l.sectors, l.ideal_sectors, l.wavefronts, l.ideal_wavefronts, l.sectors_per_request(),
        l.conflicts_per_request(), l.lanes_per_address());
    s += buf;
  }
  return s + "\n]}\n";
}

}  // namespace simt::access

// --- the instrumentation's callbacks (weak: a build with GCC's real
// AddressSanitizer keeps libasan's).
#define SIMT_CB(kind, n, store)                                                                         \
  extern "C" __attribute__((weak)) void __asan_##kind##n##_noabort(std::uintptr_t a) {                  \
    if (__builtin_expect(simt_access_active, 0))                                                        \
      simt::detail::record(a, n, store, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0))); \
  }
SIMT_CB(load, 1, false)
SIMT_CB(load, 2, false)
SIMT_CB(load, 4, false)
SIMT_CB(load, 8, false)
SIMT_CB(load, 16, false)
SIMT_CB(store, 1, true)
SIMT_CB(store, 2, true)
SIMT_CB(store, 4, true)
SIMT_CB(store, 8, true)
SIMT_CB(store, 16, true)
#undef SIMT_CB

extern "C" __attribute__((weak)) void __asan_loadN_noabort(std::uintptr_t a, std::size_t n) {
  if (__builtin_expect(simt_access_active, 0))
    simt::detail::record(a, static_cast<unsigned>(n), false,
                         reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}
extern "C" __attribute__((weak)) void __asan_storeN_noabort(std::uintptr_t a, std::size_t n) {
  if (__builtin_expect(simt_access_active, 0))
    simt::detail::record(a, static_cast<unsigned>(n), true,
                         reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}
extern "C" __attribute__((weak)) void __asan_handle_no_return() {}
