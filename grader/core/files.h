// grader/core/files.h: a whole file read or written, the one way the grader does it.
#pragma once

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

}  // namespace cudalab
