// grader/core/files.h: a whole file read or written, the one way the grader does it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudalab {

// The file's bytes; std::nullopt where it cannot be opened. Only for files the
// grader wrote or a bound checked before (checks.h over_bound): nothing here
// limits the size.
std::optional<std::string> read_file(const std::filesystem::path& p);
// The file's bytes, "" where it cannot be opened.
std::string read_text(const std::filesystem::path& p);
// Writes `text` to p, its folders made first, through a temporary file renamed
// over p: a reader (a resumed batch, a platform's upload) never sees half a
// file. False where it could not be written.
bool write_text(const std::filesystem::path& p, const std::string& text);

// The cells of one CSV line (quoted cells may hold commas; "" is a quote).
std::vector<std::string> split_csv_line(const std::string& line);

// The most the grader reads of what a check's process wrote, each checked
// by its size before a byte of it is read (the sandbox lets a check write up
// to 1 GiB, and a submission's checks run side by side): over it, the check
// fails and says which bound. A record holds one check's verdict, messages
// and measurements (a few KiB); a launch trace, the launches of one speed
// check's run; an access report, per-line counts of a lab's kernels. A
// student's evidence may be no larger than the reference's for the same
// check (which also holds the expected values) plus kEvidenceSlackBytes.
inline constexpr std::uintmax_t kMaxRecordBytes = 1u << 20;
inline constexpr std::uintmax_t kMaxTraceBytes = 4u << 20;
inline constexpr std::uintmax_t kMaxAccessReportBytes = 4u << 20;
inline constexpr std::uintmax_t kEvidenceSlackBytes = 1u << 20;

// "12.0 MiB", "640 KiB", "37 bytes". Host-only (tested).
std::string describe_bytes(std::uintmax_t bytes);

// "" when `file` is at most `limit` bytes; else the failure for the student:
// "the check wrote 64.0 MiB to its record, more than the 1.0 MiB a record may
// hold: the grader did not read it".
std::string over_bound(const std::filesystem::path& file, std::uintmax_t limit, const std::string& what);

}  // namespace cudalab
