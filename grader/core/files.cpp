#include "core/files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace cudalab {

std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_text(const std::filesystem::path& p) {
  return read_file(p).value_or(std::string{});
}

bool write_text(const std::filesystem::path& p, const std::string& text) {
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  // A temporary file of this writer's own: two graders (on two nodes of a
  // Slurm array sharing the folder, or two threads) may write p at once.
  static std::atomic<unsigned> writes{0};
  char host[256] = {};
  (void)gethostname(host, sizeof host - 1);
  const std::filesystem::path tmp = p.string() + fmt::format(".{}.{}.{}.tmp", host, getpid(), writes++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
      cells.back() += '"', ++i;
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      cells.emplace_back();
    else
      cells.back() += c;
  }
  return cells;
}

std::string describe_bytes(std::uintmax_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1u << 20));
  if (bytes >= (1u << 10)) return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / (1u << 10));
  return fmt::format("{} bytes", bytes);
}

std::string over_bound(const std::filesystem::path& file, std::uintmax_t limit, const std::string& what) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec || size <= limit) return {};
  return fmt::format(
      "the check wrote {} to {}, more than the {} it may hold: the grader did not read it (something in the "
      "test process wrote into a file that only the harness writes)",
      describe_bytes(size), what, describe_bytes(limit));
}

}  // namespace cudalab
