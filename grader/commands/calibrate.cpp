// cudalab calibrate [LAB...]: the command line of calibrate.h's
// run_calibration.
#include "authoring/calibrate.h"

#include "commands.h"
#include "common.h"

namespace cudalab {

CalibrateCommand::CalibrateCommand(CLI::App& app)
    : Command(app, "calibrate",
              "On the course's GPU: time every speed check's reference and the known student files "
              "(tests/variants), propose min_ratio and the credit curve (docs/calibration.md); instructor's "
              "tree only") {
  o_.source_root = kSourceRoot;
  o_.build_root = kBuildRoot;
  sub_->add_option("labs", o_.labs, "labs to calibrate (default: all)");
  sub_->add_option("--runs", o_.runs, "separate runs of each variant and check (default 3)");
  sub_->add_flag("--write", o_.write,
                 "record each calibrated check's measurements and proposal in the GPU's table "
                 "(calibration/<gpu>.toml) and put the proposals into the labs' lab.toml files (only the "
                 "numbers change)");
  sub_->add_option("--from-records", from_records_,
                   "a dry run: read the records of an earlier run from this folder "
                   "(<lab>/<check>/<variant>-<run>.json) instead of timing; needs no GPU");
  sub_->add_option("--records-dir", records_dir_,
                   "where the runs write their records (default <build>/calibration/<date-time>)");
  sub_->add_option("--labs-dir", labs_dir_, "where <lab>/lab.toml are read and written (default labs/)");
  sub_->add_option("--tables-dir", tables_dir_,
                   "where --write puts the GPU's calibration table (default calibration/)");
  sub_->add_option("--correct-margin", o_.margins.correct,
                   "min_ratio at least this fraction below the slowest correct run (default 0.10)");
  sub_->add_option("--foil-margin", o_.margins.foil,
                   "the fastest foil run at least this fraction below min_ratio (default 0.10)");
  sub_->add_flag("--no-build", o_.no_build, "do not build the variant test binaries first");
  sub_->add_flag("--build-only", o_.build_only,
                 "check for a GPU and build the variant test binaries, time nothing (a first, long step)");
  sub_->add_flag("-v,--verbose", o_.verbose, "show the build's and failed runs' whole output");
}

int CalibrateCommand::run() {
  calibration::Options o = o_;
  o.from_records = from_records_;
  o.records_dir = records_dir_;
  o.labs_dir = labs_dir_;
  o.tables_dir = tables_dir_;
  return calibration::run_calibration(o);
}

}  // namespace cudalab
