// grader/run/seed.h: the inputs' seed a graded check runs with.
//
// The course's grading seed exists so that outputs hard-coded for the public
// seed fail at grading time. It must then never reach the student's code:
// a check's process runs that code, which can read its own command line and
// print it into the report, and the next submission would hard-code outputs
// for the grading seed instead. So no check ever gets the course's seed.
// Each lab of each submission gets its own, derived with a keyed hash
// (SipHash-2-4) from
//   - a random key kept in the grading folder (grading.key, never readable
//     by a check, made on first use), so that nothing about a derived seed
//     is predictable without it, also for a course whose seed is a small
//     number that could be searched;
//   - the course's seed (or --seed), so that a course that changes it
//     changes every input;
//   - the lab and the exact contents of the submission's files for it, so
//     that a seed read back from one submission is worthless for the next:
//     any change to the files (hard-coded outputs included) changes it.
// The same files graded again in the same grading folder get the same seed
// (and the reference's evidence kept for it). Host-only (tested).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace cudalab {

// SipHash-2-4 of `data` under the 128-bit key (k0, k1).
std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, const std::string& data);

struct GradingKey {
  std::uint64_t k0 = 0, k1 = 0;
};

// The grading folder's key: read from work_dir/grading.key, or made there
// from /dev/urandom (mode 0600; several graders sharing the folder, as a
// Slurm array does, agree on the first one written). Throws
// std::runtime_error when it can be neither read nor made.
GradingKey grading_key(const std::filesystem::path& work_dir);

// The seed for one lab of one submission: `files` are (name, contents) of
// the lab's student files. A decimal number, as the test binaries take it.
std::string derive_seed(const GradingKey& key, const std::string& course_seed, const std::string& lab,
                        std::vector<std::pair<std::string, std::string>> files);

}  // namespace cudalab
