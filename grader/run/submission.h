// grader/run/submission.h: what a submission holds for each lab.
//
// A submission is a folder (or an archive, extracted first) in repo layout
// (labs/03_tiling/matmul_tiled.cu) or flat (matmul_tiled.cu), possibly nested
// in a folder. Only the files each lab.toml lists as student files are taken;
// everything else is listed as ignored with the reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/time_limits.h"
#include "cudalab/manifest.h"

namespace cudalab {

inline constexpr std::uintmax_t kMaxStudentFileBytes = 1 << 20;

// Bounds on an archive, passed to tools/extract.py (its defaults equal them):
// what a submission may unpack to is bounded before it is read or written.
inline constexpr int kMaxArchiveMembers = 2000;                     // entries, folders included
inline constexpr std::uintmax_t kMaxArchiveBytes = 64 << 20;        // written in all
inline constexpr std::uintmax_t kMaxArchiveMemberBytes = 10 << 20;  // one member; bigger ones skipped
inline constexpr int kMaxArchiveRatio = 100;  // a .zip member over 1 MiB compressed more: skipped
inline constexpr int kMaxArchiveDepth = 16;   // folders; deeper members skipped
// What extract_archive reads of the extractor's output: its listing of
// skipped members is about 32 KiB at most (100 lines of 200-character names).
inline constexpr std::size_t kMaxExtractOutputBytes = 256 * 1024;

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

// A submission graded as the whole course (no assignment chosen) that holds
// the files of some labs and none of others: a line that names the labs
// counted as missing and how to grade it as the assignment it was handed in
// for; "" otherwise. assignments: the course's, as (name, its labs). Host-only
// (tested).
std::string partial_submission_note(
    const SubmissionPlan& plan,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& assignments);

// Scans a submission folder. Host-only (tested). A file named close to a
// lab's student file (near_student_file) is not graded: the lab's missing
// message and the ignored list say which file it probably is and what it must
// be called. `outside`: the file names of the course's labs that are not
// graded now (an assignment's grade): passed over without a word, as those
// labs appear nowhere in it.
SubmissionPlan plan_submission(const std::filesystem::path& root, const std::vector<LabSpec>& labs,
                               const std::vector<std::string>& outside = {});

// How far a file name may be from a student file's (edits: a letter added,
// dropped, changed, or two swapped) to be named as probably that file.
inline constexpr std::size_t kNearNameEdits = 2;
struct NearName {
  std::string name;  // the student file it probably is: "matmul_tiled.cu"
  std::string how;   // "differs from it only in upper and lower case"
};
// The student file `name` is probably, by a case-insensitive match, a mix-up
// of source extensions (.cu, .cuh, .cpp, ...), or at most kNearNameEdits edits
// (names of 6 characters or more); nullopt if none or if it is one exactly.
std::optional<NearName> near_student_file(const std::string& name,
                                          const std::vector<std::string>& student_files);

// A path printed safely: control characters and non-ASCII bytes escaped.
std::string printable(const std::string& s);

// Unpacks an archive with tools/extract.py into dest; false with a message on
// failure. The archive is refused whole ("cannot unpack NAME: " and the
// extractor's one line) when it has more than kMaxArchiveMembers entries or
// unpacks to more than kMaxArchiveBytes (declared sizes checked first, then
// every byte counted as it is written; a .tar.gz's stream is decompressed no
// further), is damaged, or takes more than kExtractLimit_s (time_limits.h). A member is
// skipped, and listed in `ignored`, when it is over kMaxArchiveMemberBytes, a
// .zip member compressed more than kMaxArchiveRatio:1, deeper than
// kMaxArchiveDepth folders, a link or device, or named unsafely (absolute,
// '..', control characters, over 1024 bytes or a part over 255): at most 100
// listed, then a count. The extractor's output is read up to
// kMaxExtractOutputBytes, and a traceback never reaches the message.
bool extract_archive(const std::filesystem::path& archive, const std::filesystem::path& dest,
                     const std::filesystem::path& source_root, std::vector<std::string>& ignored,
                     std::string& error);

bool is_archive(const std::filesystem::path& p);

}  // namespace cudalab
