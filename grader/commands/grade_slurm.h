// grader/commands/grade_slurm.h: `cudalab grade --batch DIR --slurm`: the
// batch submitted to Slurm rather than graded here (the job script and the
// sbatch parsing are slurm.h's).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"

namespace cudalab {

// One array task per chunk of the batch (count submissions), each `cudalab
// grade --batch ... --shard I/N` in its own grading folder, and a collecting
// job after them writing the gradebook to out. Nothing is graded here.
int submit_to_slurm(const GradeCommand::Args& a, std::size_t count, const std::filesystem::path& out);

// The command that writes the gradebook of the batch graded into out (`cudalab
// grade --batch ... --collect`): the collecting job's and the one to run by
// hand. It reads the batch as the tasks did (--course, --assignment, --from):
// without --from an export is refused, and without --assignment the tasks'
// grades would not count as this assignment's.
std::vector<std::string> collect_command(const GradeCommand::Args& a, const std::filesystem::path& out);

// A command line as a POSIX shell reads it back.
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace cudalab
