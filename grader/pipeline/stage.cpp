// grader/pipeline/stage.cpp: stage a submission: unpack it, choose its files, derive its seeds, overlay them,
// then list includes, build and check the policy (the CPU's half of a grade).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cudalab/replay.h"
#include "explain.h"
#include "grade.h"
#include "pipeline/internal.h"
#include "policy.h"
#include "process.h"
#include "sandbox.h"
#include "submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// Copies only when the content differs, so unchanged files keep their
// timestamps and the build does not recompile them.
void sync_file(const fs::path& from, const fs::path& to) {
  if (fs::exists(to) && read_text(from) == read_text(to)) return;
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

}  // namespace

void Grader::sync_overlay(const SubmissionPlan* plan, int slot) {
  const fs::path overlay_ = overlay(slot);
  const fs::path labs = cfg_.source_root / "labs";
  for (const auto& lab : cfg_.labs) {
    for (const auto& e : fs::directory_iterator(labs / lab.id)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      const bool student =
          std::find(lab.student_files.begin(), lab.student_files.end(), name) != lab.student_files.end();
      fs::path from = e.path();  // pristine; for a student file, the skeleton
      if (student && plan)
        if (const LabFiles* lf = plan->find(lab.id))
          for (const auto& [f, where] : lf->found)
            if (f == name) from = where;
      sync_file(from, overlay_ / lab.id / name);
    }
  }
}

Grader::Staged Grader::stage(const fs::path& submission, const std::string& id, int slot) {
  const auto t0 = std::chrono::steady_clock::now();
  profile(fmt::format("slot {}: staging {}", slot, id));
  Staged st;
  st.slot = slot;
  SubmissionGrade& g = st.grade;
  g.id = id;
  for (const auto& lab : cfg_.labs) {
    LabGrade lg;
    lg.spec = &lab;
    lg.weight = cfg_.course.weight(lab.id);
    g.labs.push_back(lg);
  }
  st.ready.assign(g.labs.size(), false);
  auto done = [&] {
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return st;
  };
  auto fail_all = [&](const std::string& why) {
    g.error = why;
    for (auto& lab : g.labs) lab.status = LabStatus::missing, lab.message = why;
  };

  // The submission: a folder, or an archive unpacked into the slot's folder.
  fs::path root = submission;
  if (!fs::exists(submission)) {
    fail_all(fmt::format("the submission {} does not exist", submission.string()));
    return done();
  }
  if (fs::is_regular_file(submission)) {
    if (!is_archive(submission)) {
      fail_all(fmt::format("{} is neither a folder nor a .zip, .tar.gz or .tar archive",
                           printable(submission.filename().string())));
      return done();
    }
    root = build(slot).parent_path() / "unpacked";
    fs::remove_all(root);
    std::string error;
    if (!extract_archive(submission, root, cfg_.source_root, g.ignored, error)) {
      std::error_code ec;
      fs::remove_all(root, ec);  // what a refused archive left: nothing stays
      fail_all(error);
      return done();
    }
  }
  const SubmissionPlan plan = plan_submission(root, cfg_.labs);
  g.ignored.insert(g.ignored.end(), plan.ignored.begin(), plan.ignored.end());
  g.notes.insert(g.notes.end(), plan.notes.begin(), plan.notes.end());
  // Each lab's inputs' seed, from its files as handed in (seed.h).
  st.seeds.assign(g.labs.size(), "");
  for (std::size_t i = 0; i < g.labs.size(); ++i)
    if (const LabFiles* files = plan.find(g.labs[i].spec->id); files && files->complete()) {
      std::vector<std::pair<std::string, std::string>> contents;
      for (const auto& [name, where] : files->found) contents.emplace_back(name, read_text(where));
      st.seeds[i] = derive_seed(key(), cfg_.seed, g.labs[i].spec->id, std::move(contents));
    }

  std::string error;
  if (!ensure_configured(slot, error)) throw std::runtime_error(error);
  sync_overlay(&plan, slot);
  // An unpacked archive has given the overlay its student files: nothing of
  // it stays in the grading folder.
  if (root != submission) {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  if (!fs::exists(build(slot) / "harness" / "cudalab-gpuinfo")) {
    bool ignored = false;
    build_lab("cudalab-gpuinfo", slot, ignored);
  }
  // What each lab's files include, before anything is compiled: an include
  // from outside what a lab may include rejects the lab unbuilt.
  // Side by side: each lab's listing is one preprocessor run.
  std::vector<std::string> include_bad(g.labs.size());
  for_each_side_by_side(g.labs.size(), g.labs.size(), [&](std::size_t i) {
    if (const LabFiles* files = plan.find(g.labs[i].spec->id); files && files->complete())
      include_bad[i] = include_problems(*g.labs[i].spec, slot);
  });
  // Every complete lab's build at once first: ninja compiles the labs side by
  // side. A lab that fails is built again alone below, for its own log.
  {
    std::vector<std::string> targets;
    for (std::size_t i = 0; i < g.labs.size(); ++i)
      if (const LabFiles* files = plan.find(g.labs[i].spec->id);
          files && files->complete() && include_bad[i].empty())
        targets.push_back(g.labs[i].spec->id + "-tests");
    bool all_ok = false;
    if (!targets.empty()) {
      profile(fmt::format("slot {}: building {} labs", slot, targets.size()));
      build_targets(targets, slot, all_ok);
      profile(fmt::format("slot {}: built", slot));
    }
  }
  // The policy of each built lab, side by side (each reads its own objects).
  std::vector<std::future<std::string>> policies(g.labs.size());
  std::vector<std::string> build_logs(g.labs.size());
  std::vector<bool> built(g.labs.size(), false);
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    const LabFiles* files = plan.find(g.labs[i].spec->id);
    if (!files || !files->complete() || !include_bad[i].empty()) continue;
    bool ok = false;
    build_logs[i] = build_lab(g.labs[i].spec->id + "-tests", slot, ok);
    built[i] = ok;
    if (ok)
      policies[i] = std::async(std::launch::async,
                               [this, &g, i, slot] { return policy_problems(*g.labs[i].spec, slot); });
  }
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    const LabFiles* files = plan.find(lab.spec->id);
    if (!files || !files->complete()) {
      std::string why;
      if (files)
        for (const auto& m : files->missing) why += (why.empty() ? "" : "; ") + m;
      lab.status = LabStatus::missing;
      lab.message = why;
      continue;
    }
    if (!include_bad[i].empty()) {
      lab.status = LabStatus::rejected;
      lab.message = "the lab was not run:\n" + include_bad[i];
      continue;
    }
    bool ok = built[i];
    const std::string& log = build_logs[i];
    if (!ok) {
      // A link error after a clean compile is often a call the lab forbids
      // (cuBLAS is not linked): the policy names it better than the linker.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/true); !bad.empty()) {
        lab.status = LabStatus::rejected;
        lab.message = "the lab was not run:\n" + bad;
        continue;
      }
      lab.status = LabStatus::build_failed;
      lab.message = "the lab did not compile:\n" + log;
      continue;
    }
    if (const std::string bad = policies[i].get(); !bad.empty()) {
      lab.status = LabStatus::rejected;
      lab.message = "the lab was not run:\n" + bad;
      continue;
    }
    profile(fmt::format("slot {}: {} policy checked", slot, lab.spec->id));
    if (cfg_.course.cpu_mode || cfg_.cpu_fallback) {
      const std::string cpu_log = build_lab(lab.spec->id + "-tests-cpu", slot, ok);
      // The CPU-mode object is the student's code too, compiled another way:
      // the same policy, with simt's runtime in place of CUDA's.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/!ok, /*cpu_mode=*/true);
          !bad.empty()) {
        lab.status = LabStatus::rejected;
        lab.message = "the lab was not run:\n" + bad;
        continue;
      }
      if (!ok) {
        lab.status = LabStatus::build_failed;
        lab.message = "the lab did not compile for CPU mode:\n" + cpu_log;
        continue;
      }
    }
    st.ready[i] = true;
  }
  return done();
}

}  // namespace cudalab
