// grader/commands/grade_slurm.h: `cudalab grade --batch DIR --slurm`: the
// batch submitted to Slurm rather than graded here (the job script and the
// sbatch parsing are slurm.h's).
#pragma once

#include <cstddef>
#include <filesystem>

#include "commands.h"

namespace cudalab {

// One array task per chunk of the batch (count submissions), each `cudalab
// grade --batch ... --shard I/N` in its own grading folder, and a collecting
// job after them writing the gradebook to out. Nothing is graded here.
int submit_to_slurm(const GradeCommand::Args& a, std::size_t count, const std::filesystem::path& out);

}  // namespace cudalab
