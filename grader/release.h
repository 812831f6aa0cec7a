// cudalab release: writes the student release of the course.
//
//   cudalab release --out DIR [--archs 75,90] [--course FILE] [--no-gpu] [--force]
//
// The work is tools/release.py's (what is copied, what is left out, how the
// prebuilt references are compiled); this is its subcommand in the cudalab
// program.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace cudalab {

class ReleaseCommand {
 public:
  explicit ReleaseCommand(CLI::App& app);
  ReleaseCommand(const ReleaseCommand&) = delete;  // CLI11 holds pointers to the members
  ReleaseCommand& operator=(const ReleaseCommand&) = delete;
  bool selected() const { return sub_ && sub_->parsed(); }
  // Runs tools/release.py in place of this process; returns only on failure.
  int run() const;

 private:
  CLI::App* sub_ = nullptr;
  std::string out_, archs_, course_;
  bool no_gpu_ = false, force_ = false;
};

// Registers `release` on the program's command line.
inline ReleaseCommand add_release_command(CLI::App& app) {
  return ReleaseCommand(app);
}

}  // namespace cudalab
