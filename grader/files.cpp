#include "files.h"

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
  const std::filesystem::path tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << text;
    if (!out.flush()) return false;
  }
  std::filesystem::rename(tmp, p, ec);
  return !ec;
}

}  // namespace cudalab
