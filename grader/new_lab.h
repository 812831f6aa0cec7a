// cudalab new-lab: lays out a new lab's files, ready to fill.
//
//   cudalab new-lab 05_reduction "Sum reduction"
//
// The work is tools/new_lab.py's (which files, from tools/lab_template/, and
// which names it refuses); this is its subcommand in the cudalab program.
// docs/new-lab.md is the guide to filling them in.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace cudalab {

class NewLabCommand {
 public:
  explicit NewLabCommand(CLI::App& app);
  NewLabCommand(const NewLabCommand&) = delete;  // CLI11 holds pointers to the members
  NewLabCommand& operator=(const NewLabCommand&) = delete;
  bool selected() const { return sub_ && sub_->parsed(); }
  // Runs tools/new_lab.py in place of this process; returns only on failure.
  int run() const;

 private:
  CLI::App* sub_ = nullptr;
  std::string name_, title_;
};

// Registers `new-lab` on the program's command line.
inline NewLabCommand add_new_lab_command(CLI::App& app) {
  return NewLabCommand(app);
}

}  // namespace cudalab
