// grader/run/names_cache.h: the symbol lists of the link's libraries, kept in the
// grading folder between grader runs.
//
// The policy asks who defines each name of a student object (policy.h,
// link_owners): the harness, the C, C++ and CUDA runtimes. Reading those
// libraries with nm took 0.45 s of every warm grade; a list saved here is read
// instead, but only for the very file it was read from (file_stamp).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace cudalab {

// Defined global names -> the object file that defines each ("" if it is not
// a readable file of its own: a shared library, a member of a real archive).
using NameMap = std::map<std::string, std::string>;

// What identifies one version of a file: device, inode, size, modification
// and change time. A replaced or rewritten library has another inode or
// change time, and no one can set a change time back. "" if it cannot be read.
std::string file_stamp(const std::filesystem::path& path);

// The list saved in `dir` for `key` (a library's path and how it is read),
// where it was saved under `stamp`; nullptr otherwise.
std::shared_ptr<const NameMap> read_saved_names(const std::filesystem::path& dir, const std::string& key,
                                                const std::string& stamp);

// Saves the list for the next grader run (whole or not at all: files.h
// write_text). A folder that cannot be written only costs the next run its nm.
void save_names(const std::filesystem::path& dir, const std::string& key, const std::string& stamp,
                const NameMap& names);

}  // namespace cudalab
