// grader/submission.h: what a submission holds for each lab.
//
// A submission is a folder (or an archive, extracted first) in repo layout
// (labs/03_tiling/matmul_tiled.cu) or flat (matmul_tiled.cu), possibly nested
// in a folder. Only the files each lab.toml lists as student files are taken;
// everything else is listed as ignored with the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cudalab/manifest.h"

namespace cudalab {

inline constexpr std::uintmax_t kMaxStudentFileBytes = 1 << 20;

struct LabFiles {
  std::string lab;
  std::vector<std::pair<std::string, std::filesystem::path>> found;  // student file name -> where
  std::vector<std::string> missing;  // messages: "missing matmul_tiled.cu (...)"
  bool complete() const { return missing.empty(); }
};

struct SubmissionPlan {
  std::filesystem::path root;
  std::vector<LabFiles> labs;        // in the course's order
  std::vector<std::string> ignored;  // "labs/03_tiling/test_tiling.cpp: tests always come from the course"
  std::vector<std::string> notes;    // e.g. two copies of a file

  const LabFiles* find(const std::string& lab) const;
};

// Scans a submission folder. Host-only (tested).
SubmissionPlan plan_submission(const std::filesystem::path& root, const std::vector<LabSpec>& labs);

// A path printed safely: control characters and non-ASCII bytes escaped.
std::string printable(const std::string& s);

// Unpacks an archive with tools/extract.py into dest; false with a message on failure.
bool extract_archive(const std::filesystem::path& archive, const std::filesystem::path& dest,
                     const std::filesystem::path& source_root, std::vector<std::string>& ignored,
                     std::string& error);

bool is_archive(const std::filesystem::path& p);

}  // namespace cudalab
