#include "platforms/slurm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace cudalab {

namespace {

bool to_size(const std::string& s, std::size_t& out) {
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  out = std::stoul(s);
  return true;
}

}  // namespace

bool parse_shard(const std::string& text, Shard& out, std::string& error) {
  const auto slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !to_size(text.substr(0, slash), s.index) ||
      !to_size(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count) {
    error =
        fmt::format("--shard {}: expected I/N with 0 <= I < N (e.g. 0/4, the first of four shares)", text);
    return false;
  }
  out = s;
  return true;
}

std::pair<std::size_t, std::size_t> shard_range(std::size_t total, const Shard& shard) {
  const std::size_t base = total / shard.count, extra = total % shard.count;
  const std::size_t first = shard.index * base + std::min(shard.index, extra);
  return {first, first + base + (shard.index < extra ? 1 : 0)};
}

std::size_t slurm_tasks(std::size_t total, std::size_t chunk) {
  chunk = std::max<std::size_t>(1, chunk);
  return std::max<std::size_t>(1, (total + chunk - 1) / chunk);
}

std::string sbatch_job_id(const std::string& output) {
  std::string id;
  for (char c : output) {
    if (std::isdigit(static_cast<unsigned char>(c)))
      id += c;
    else if (!id.empty())
      break;
    else if (!std::isspace(static_cast<unsigned char>(c)))
      return {};
  }
  return id;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '=' || c == ':' ||
               c == ',';
      }))
    return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurm_task_script(const std::vector<std::string>& grade, const std::string& work_dir,
                              std::size_t tasks) {
  std::string cmd;
  for (const auto& w : grade) cmd += shell_quote(w) + " ";
  return fmt::format(
      "#!/bin/sh\n"
      "# One task of a cudalab batch on Slurm: share $SLURM_ARRAY_TASK_ID of {0}, in its own\n"
      "# build slots of the shared grading folder (written by cudalab grade --slurm).\n"
      "set -e\n"
      "task=${{SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}}\n"
      "exec {1}--shard \"$task/{0}\" --work-dir {2}\n",
      tasks, cmd, shell_quote(work_dir));
}

}  // namespace cudalab
