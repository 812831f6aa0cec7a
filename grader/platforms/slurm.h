// grader/platforms/slurm.h: a batch graded on a Slurm cluster. `cudalab
// grade --batch DIR --slurm [sbatch options]` submits one job array whose
// tasks each grade a contiguous share of the submissions (`--shard I/N`)
// into the shared results folder, with the batch's resume rules, and a last
// job, after the array, that only collects (`--collect`): grades.csv,
// index.html and the distribution. docs/slurm.md says what a cluster needs.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cudalab {

struct Shard {
  std::size_t index = 0, count = 1;  // share `index` of `count`
};

// "I/N" with 0 <= I < N; false with a message otherwise. Host-only (tested).
bool parse_shard(const std::string& text, Shard& out, std::string& error);

// The submissions [first, last) of `total` that a shard grades: contiguous
// shares whose sizes differ by at most one. Host-only (tested).
std::pair<std::size_t, std::size_t> shard_range(std::size_t total, const Shard& shard);

// How many array tasks grade `total` submissions `chunk` at a time (at
// least one). Host-only (tested).
std::size_t slurm_tasks(std::size_t total, std::size_t chunk);

// The job id in `sbatch --parsable`'s output ("1234" or "1234;cluster");
// empty if there is none. Host-only (tested).
std::string sbatch_job_id(const std::string& output);

// Quotes a word for a POSIX shell. Host-only (tested).
std::string shell_quote(const std::string& word);

// The array task's script: `grade` is the cudalab command line without
// --shard and --work-dir. Every task grades in the one grading folder
// `work_dir` (prepared once with --prepare): a shard builds in slots of its
// own there (2 x its index and the next), and shares the reference's build
// and evidence, which it only reads once they exist.
std::string slurm_task_script(const std::vector<std::string>& grade, const std::string& work_dir,
                              std::size_t tasks);

}  // namespace cudalab
