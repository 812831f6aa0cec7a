// grader/commands/commands.h: every subcommand of the cudalab program, one
// class each, each in its own file (commands/<name>.cpp); main.cpp only
// constructs them, parses the command line and runs the one it names.
//
// The pattern: the constructor adds the subcommand and its options to the
// program's CLI::App; selected() says whether the command line named it;
// run() does the work and returns the exit code (common.h). CLI11 keeps
// pointers to the members the options write to, so a command is constructed
// in place (a local of main) and never copied or moved.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "authoring/calibrate.h"

namespace cudalab {

// What every command has: its subcommand, and no copies.
class Command {
 public:
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  bool selected() const { return sub_->parsed(); }

 protected:
  Command(CLI::App& app, const std::string& name, const std::string& description)
      : sub_(app.add_subcommand(name, description)) {}
  ~Command() = default;
  CLI::App* sub_;
};

// cudalab test [LAB...]: build the labs in labs/ and run their checks on this
// machine, on its GPU or in CPU mode (commands/test.cpp).
class TestCommand : public Command {
 public:
  explicit TestCommand(CLI::App& app);
  int run();

  struct Args {
    std::vector<std::string> labs, only;
    std::string seed, sanitize;
    bool verbose = false, no_build = false, cpu = false, access_report = false;
    bool all_shapes = false;  // CPU mode: the large shapes too, as the grader runs them
  };

 private:
  Args a_;
};

// cudalab grade [SUBMISSION | --batch DIR]: grade a submission, a batch of
// them (here, on several GPUs, or through Slurm), or the working copy
// (commands/grade.cpp).
class GradeCommand : public Command {
 public:
  explicit GradeCommand(CLI::App& app);
  int run();

  struct Args {
    std::string submission;  // empty: the working copy's labs/
    std::string batch;       // a folder of submissions
    std::string from;        // --from: the batch is this platform's export (intake.h)
    std::string out;         // where results go
    std::string course;      // course.toml
    std::string assignment;  // --assignment: that assignment's labs alone
    std::string seed;
    std::string work;                   // the grading build
    std::vector<std::string> sanitize;  // memcheck, racecheck, ...
    std::string gpus;                   // --gpus: all, N or a list; empty: the default GPU
    std::string shard;                  // --shard I/N: only that share of the batch (a Slurm task)
    bool collect = false;               // --collect: only the gradebook from graded results
    bool slurm = false;                 // --slurm: submit the batch as a Slurm job array
    std::size_t slurm_chunk = 10;       // submissions per array task
    std::vector<std::string> sbatch;    // the sbatch options after --slurm
    bool force = false, verbose = false, prepare = false;
    bool no_cpu = false;  // without a GPU, grade nothing unless course.toml sets cpu_mode
  };

 private:
  Args a_;
};

// cudalab doctor: what this machine has for cudalab, and what is missing
// (commands/doctor.cpp).
class DoctorCommand : public Command {
 public:
  explicit DoctorCommand(CLI::App& app);
  int run();
};

// cudalab selftest [--long] [MESON TEST ARGS...]: the framework's own tests
// (commands/selftest.cpp).
class SelftestCommand : public Command {
 public:
  explicit SelftestCommand(CLI::App& app);
  int run();

 private:
  bool long_ = false;
};

// cudalab expect --binary B --lab-toml T --expect E: run a lab test binary
// and compare its verdicts with an expect.toml (commands/expect.cpp).
class ExpectCommand : public Command {
 public:
  explicit ExpectCommand(CLI::App& app);
  int run();

 private:
  std::string binary_, lab_toml_, expect_;
  bool cpu_ = false, student_loop_ = false;
  std::string cpu_binary_, access_binary_, reference_access_binary_;
};

// cudalab export RESULTS...: write a graded submission's views again from its
// grade.json (commands/export.cpp; the views are export.h's).
class ExportCommand : public Command {
 public:
  explicit ExportCommand(CLI::App& app);
  int run();

 private:
  std::vector<std::string> dirs_;
};

// cudalab release --out DIR: the student release, written by tools/release.py
// (commands/release.cpp).
class ReleaseCommand : public Command {
 public:
  explicit ReleaseCommand(CLI::App& app);
  // Runs tools/release.py in place of this process; returns only on failure.
  int run();

 private:
  std::string out_, archs_, course_;
  bool no_gpu_ = false, force_ = false;
};

// cudalab bundle --assignment NAME --platform P: a platform's upload-ready
// bundle for one assignment, written by tools/bundle.py (commands/bundle.cpp).
class BundleCommand : public Command {
 public:
  explicit BundleCommand(CLI::App& app);
  // Checks the command line and the course file, then runs tools/bundle.py in
  // place of this process; returns only on an error.
  int run();

 private:
  std::string assignment_, platform_, out_, course_, image_;
  bool force_ = false;
};

// cudalab calibrate [LAB...]: propose the speed checks' thresholds from timed
// runs on the course's GPU (commands/calibrate.cpp; the work is calibrate.h's
// run_calibration).
class CalibrateCommand : public Command {
 public:
  explicit CalibrateCommand(CLI::App& app);
  int run();

 private:
  calibration::Options o_;
  std::string from_records_, records_dir_, labs_dir_, tables_dir_;
};

// cudalab new-lab NN_name "Title": a new lab's files from templates
// (commands/new_lab.cpp).
class NewLabCommand : public Command {
 public:
  explicit NewLabCommand(CLI::App& app);
  int run();

 private:
  std::string name_, title_;
};

class CheckLabCommand : public Command {
 public:
  explicit CheckLabCommand(CLI::App& app);
  int run();

 private:
  std::string name_;
  bool no_build_ = false;
};

}  // namespace cudalab
