#include "run/names_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace cudalab {

namespace {

std::filesystem::path saved_file(const std::filesystem::path& dir, const std::string& key) {
  return dir / fmt::format("{:016x}.json", std::hash<std::string>{}(key));
}

}  // namespace

std::string file_stamp(const std::filesystem::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return fmt::format("{}:{}:{}:{}.{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                     st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

std::shared_ptr<const NameMap> read_saved_names(const std::filesystem::path& dir, const std::string& key,
                                                const std::string& stamp) {
  std::ifstream in(saved_file(dir, key));
  if (!in) return nullptr;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  // The key too: two keys may share a file name's hash.
  if (!j.is_object() || j.value("path", "") != key || j.value("stamp", "") != stamp) return nullptr;
  const auto names = j.find("names");
  if (names == j.end() || !names->is_object()) return nullptr;
  auto set = std::make_shared<NameMap>();
  for (const auto& [name, where] : names->items()) {
    if (!where.is_string()) return nullptr;
    set->emplace(name, where.get<std::string>());
  }
  return set;
}

void save_names(const std::filesystem::path& dir, const std::string& key, const std::string& stamp,
                const NameMap& names) {
  const nlohmann::json j = {{"path", key}, {"stamp", stamp}, {"names", names}};
  (void)write_text(saved_file(dir, key), j.dump());
}

}  // namespace cudalab
