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
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/explain.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/sandbox.h"
#include "run/submission.h"

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

// A submission between the steps of stage(), on the CPU: what each step
// reads and adds to.
struct Grader::Staging {
  Staged st;
  fs::path submission;
  fs::path root;  // where its files are read from: the submission, or its archive unpacked
  std::optional<SubmissionPlan> plan;
  // Per lab, from build_labs: the includes' problems ("" none), whether it
  // built, its build's log and its policy's problems (to come).
  std::vector<std::string> include_bad, build_logs;
  std::vector<bool> built;
  std::vector<std::future<std::string>> policies;
  std::chrono::steady_clock::time_point t0;

  SubmissionGrade& grade() { return st.grade; }
  // The lab's files, where every one of them was found; else nullptr.
  const LabFiles* complete(std::size_t lab) const {
    const LabFiles* files = plan ? plan->find(st.grade.labs[lab].spec->id) : nullptr;
    return files && files->complete() ? files : nullptr;
  }
  void fail_all(const std::string& why) {
    st.grade.error = why;
    for (auto& lab : st.grade.labs) lab.status = LabStatus::missing, lab.message = why;
  }
};

Grader::Staged Grader::stage(const fs::path& submission, const std::string& id, int slot) {
  Staging s = begin_staging(submission, id, slot);
  if (unpack(s)) {
    plan_files(s);
    overlay_files(s);
    build_labs(s);
    settle_labs(s);
  }
  s.st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  return std::move(s.st);
}

Grader::Staging Grader::begin_staging(const fs::path& submission, const std::string& id, int slot) {
  Staging s;
  s.t0 = std::chrono::steady_clock::now();
  profile(fmt::format("slot {}: staging {}", slot, id));
  s.submission = s.root = submission;
  s.st.slot = slot;
  SubmissionGrade& g = s.grade();
  g.id = id;
  g.assignment = cfg_.course.assignment;
  for (const auto& lab : cfg_.labs) {
    LabGrade lg;
    lg.spec = &lab;
    lg.weight = cfg_.course.weight(lab.id);
    g.labs.push_back(lg);
  }
  s.st.ready.assign(g.labs.size(), false);
  s.st.seeds.assign(g.labs.size(), "");
  return s;
}

// The submission: a folder, or an archive unpacked into the slot's folder.
// False, with every lab missing and why, where it is neither.
bool Grader::unpack(Staging& s) {
  const fs::path& submission = s.submission;
  if (!fs::exists(submission)) {
    s.fail_all(fmt::format("the submission {} does not exist", submission.string()));
    return false;
  }
  if (!fs::is_regular_file(submission)) return true;
  if (!is_archive(submission)) {
    s.fail_all(fmt::format("{} is neither a folder nor a .zip, .tar.gz or .tar archive",
                           printable(submission.filename().string())));
    return false;
  }
  s.root = build(s.st.slot).parent_path() / "unpacked";
  fs::remove_all(s.root);
  std::string error;
  if (!extract_archive(submission, s.root, cfg_.source_root, s.grade().ignored, error)) {
    std::error_code ec;
    fs::remove_all(s.root, ec);  // what a refused archive left: nothing stays
    s.fail_all(error);
    return false;
  }
  return true;
}

// Which of its files are whose (submission.h), and each lab's inputs' seed,
// from its files as handed in (seed.h).
void Grader::plan_files(Staging& s) {
  SubmissionGrade& g = s.grade();
  s.plan = plan_submission(s.root, cfg_.labs, cfg_.files_outside);
  g.ignored.insert(g.ignored.end(), s.plan->ignored.begin(), s.plan->ignored.end());
  g.notes.insert(g.notes.end(), s.plan->notes.begin(), s.plan->notes.end());
  // The grade is out of what was handed out: a part of the course graded as
  // the whole of it says so, and how to grade it as its assignment.
  if (cfg_.course.assignment.empty()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> assignments;
    for (const auto& a : cfg_.course.assignments) assignments.emplace_back(a.name, a.labs);
    if (std::string note = partial_submission_note(*s.plan, assignments); !note.empty())
      g.notes.insert(g.notes.begin(), std::move(note));
  }
  for (std::size_t i = 0; i < g.labs.size(); ++i)
    if (const LabFiles* files = s.complete(i)) {
      std::vector<std::pair<std::string, std::string>> contents;
      for (const auto& [name, where] : files->found) contents.emplace_back(name, read_text(where));
      s.st.seeds[i] = derive_seed(key(), cfg_.seed, g.labs[i].spec->id, std::move(contents));
    }
}

// The student's files into the slot's overlay of the course (the skeleton
// where a file is missing).
void Grader::overlay_files(Staging& s) {
  const int slot = s.st.slot;
  std::string error;
  if (!ensure_configured(slot, error)) throw std::runtime_error(error);
  sync_overlay(&*s.plan, slot);
  // The slot's build folder is reused, submission after submission, for the
  // course's compiled part; what it built from another submission's files is
  // removed before this one's build, which may read the folder. The same
  // files again (a warm grade) keep their own outputs. Compared byte for byte,
  // never by a hash a crafted file could match.
  std::string built_from;
  std::vector<std::string> lab_ids;
  for (const auto& lab : cfg_.labs) {
    lab_ids.push_back(lab.id);
    for (const auto& f : lab.student_files) {
      const std::string text = read_text(overlay(slot) / lab.id / f);
      built_from += fmt::format("{}/{} {}\n{}\n", lab.id, f, text.size(), text);
    }
  }
  const fs::path stamp = slot_dir(cfg_.work_dir, slot) / "built-from";
  if (read_text(stamp) != built_from) {
    std::error_code ec;
    fs::remove(stamp, ec);  // first: an interrupted clear is done again next time
    const std::size_t removed = clear_student_outputs(build(slot), lab_ids);
    profile(fmt::format("slot {}: {} outputs of the previous submission removed", slot, removed));
    if (!write_text(stamp, built_from))
      throw std::runtime_error("the grader could not write " + stamp.string());
  }
  // An unpacked archive has given the overlay its student files: nothing of
  // it stays in the grading folder.
  if (s.root != s.submission) {
    std::error_code ec;
    fs::remove_all(s.root, ec);
  }
  if (!fs::exists(build(slot) / "harness" / "cudalab-gpuinfo")) {
    bool ignored = false;
    build_lab("cudalab-gpuinfo", slot, ignored);
  }
}

// What each lab's files include, then every lab built, then the policy of
// each built lab started.
void Grader::build_labs(Staging& s) {
  const SubmissionGrade& g = s.grade();
  const int slot = s.st.slot;
  const std::size_t n = g.labs.size();
  // Before anything is compiled: an include from outside what a lab may
  // include rejects the lab unbuilt. Side by side: each lab's listing is one
  // preprocessor run.
  s.include_bad.assign(n, "");
  for_each_side_by_side(n, n, [&](std::size_t i) {
    if (s.complete(i)) s.include_bad[i] = include_problems(*g.labs[i].spec, slot);
  });
  const auto buildable = [&](std::size_t i) { return s.complete(i) && s.include_bad[i].empty(); };
  // Every buildable lab at once first: ninja compiles the labs side by side.
  // A lab that fails is built again alone below, for its own log.
  std::vector<std::string> targets;
  for (std::size_t i = 0; i < n; ++i)
    if (buildable(i)) targets.push_back(g.labs[i].spec->id + "-tests");
  bool all_ok = false;
  if (!targets.empty()) {
    profile(fmt::format("slot {}: building {} labs", slot, targets.size()));
    build_targets(targets, slot, all_ok);
    profile(fmt::format("slot {}: built", slot));
  }
  // The policy of each built lab, side by side (each reads its own objects).
  s.policies.resize(n);
  s.build_logs.assign(n, "");
  s.built.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (!buildable(i)) continue;
    // Where every lab built, each is built; where one did not, each is built
    // again alone (a no-op for those that did), so a failure's log is its own.
    bool ok = all_ok;
    if (!all_ok) s.build_logs[i] = build_lab(g.labs[i].spec->id + "-tests", slot, ok);
    s.built[i] = ok;
    if (ok)
      s.policies[i] = std::async(std::launch::async,
                                 [this, &g, i, slot] { return policy_problems(*g.labs[i].spec, slot); });
  }
}

// Each lab's status: missing, rejected (includes, policy), not built, or
// ready for its checks (with its CPU-mode build where the course grades in
// CPU mode).
void Grader::settle_labs(Staging& s) {
  SubmissionGrade& g = s.grade();
  const int slot = s.st.slot;
  const auto reject = [](LabGrade& lab, const std::string& why) {
    lab.status = LabStatus::rejected;
    lab.message = "the lab was not run:\n" + why;
  };
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (!s.complete(i)) {
      std::string why;
      if (const LabFiles* files = s.plan->find(lab.spec->id))
        for (const auto& m : files->missing) why += (why.empty() ? "" : "; ") + m;
      lab.status = LabStatus::missing;
      lab.message = why;
      continue;
    }
    if (!s.include_bad[i].empty()) {
      reject(lab, s.include_bad[i]);
      continue;
    }
    if (!s.built[i]) {
      // A link error after a clean compile is often a call the lab forbids
      // (cuBLAS is not linked): the policy names it better than the linker.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/true); !bad.empty()) {
        reject(lab, bad);
        continue;
      }
      lab.status = LabStatus::build_failed;
      lab.message = "the lab did not compile:\n" + s.build_logs[i];
      continue;
    }
    if (const std::string bad = s.policies[i].get(); !bad.empty()) {
      reject(lab, bad);
      continue;
    }
    profile(fmt::format("slot {}: {} policy checked", slot, lab.spec->id));
    if (cfg_.course.cpu_mode || cfg_.cpu_fallback) {
      bool ok = false;
      const std::string cpu_log = build_lab(lab.spec->id + "-tests-cpu", slot, ok);
      // The CPU-mode object is the student's code too, compiled another way:
      // the same policy, with simt's runtime in place of CUDA's.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/!ok, /*cpu_mode=*/true);
          !bad.empty()) {
        reject(lab, bad);
        continue;
      }
      if (!ok) {
        lab.status = LabStatus::build_failed;
        lab.message = "the lab did not compile for CPU mode:\n" + cpu_log;
        continue;
      }
    }
    s.st.ready[i] = true;
  }
}

}  // namespace cudalab
