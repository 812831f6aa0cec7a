// cudalab export RESULTS...: writes a graded submission's views (or a batch's)
// again from its grade.json, without grading; the work is export.h's
// export_views.
#include "views/export.h"

#include <filesystem>

#include "commands.h"
#include "common.h"

namespace cudalab {

ExportCommand::ExportCommand(CLI::App& app)
    : Command(app, "export",
              "Write a graded submission's views again from its grade.json, without grading (results.json, "
              "prairielearn.json, junit.xml, grade.csv, report.txt, report.html; for a batch's folder also "
              "grades.csv, index.html and class.csv)") {
  sub_->add_option("results", dirs_, "a submission's results folder, or a batch's --out folder")
      ->required()
      ->check(CLI::ExistingDirectory);
}

int ExportCommand::run() {
  return export_views({dirs_.begin(), dirs_.end()}) == 0 ? kOk : kFailed;
}

}  // namespace cudalab
