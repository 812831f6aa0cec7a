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

const LabFiles* Grader::Received::complete(std::size_t lab) const {
  const LabFiles* files = plan ? plan->find(grade.labs[lab].spec->id) : nullptr;
  return files && files->complete() ? files : nullptr;
}

namespace {

void fail_all(SubmissionGrade& g, const std::string& why) {
  g.error = why;
  for (auto& lab : g.labs) lab.status = LabStatus::missing, lab.message = why;
}

}  // namespace

Grader::Staged Grader::stage(const fs::path& submission, const std::string& id, int slot) {
  const auto t0 = std::chrono::steady_clock::now();
  Received received = receive(submission, id, slot);
  Staged st;
  if (received.plan) {
    overlay_files(received, slot);
    Built built = build_labs(received, slot);
    st = settle_labs(std::move(received), std::move(built), slot);
  } else {
    st.grade = std::move(received.grade);
    st.ready.assign(st.grade.labs.size(), false);
    st.seeds = std::move(received.seeds);
  }
  st.slot = slot;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

// Its files: which are whose (submission.h), and each lab's inputs' seed,
// from its files as handed in (seed.h).
Grader::Received Grader::receive(const fs::path& submission, const std::string& id, int slot) {
  profile(fmt::format("slot {}: staging {}", slot, id));
  Received r;
  r.submission = submission;
  SubmissionGrade& g = r.grade;
  g.id = id;
  g.assignment = cfg_.course.assignment;
  for (const auto& lab : cfg_.labs) {
    LabGrade lg;
    lg.spec = &lab;
    lg.weight = cfg_.course.weight(lab.id);
    g.labs.push_back(lg);
  }
  r.seeds.assign(g.labs.size(), "");
  const std::optional<fs::path> root = unpack(submission, slot, g);
  if (!root) return r;
  r.root = *root;
  r.plan = plan_submission(r.root, cfg_.labs, cfg_.files_outside);
  g.ignored.insert(g.ignored.end(), r.plan->ignored.begin(), r.plan->ignored.end());
  g.notes.insert(g.notes.end(), r.plan->notes.begin(), r.plan->notes.end());
  // The grade is out of what was handed out: a part of the course graded as
  // the whole of it says so, and how to grade it as its assignment.
  if (cfg_.course.assignment.empty()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> assignments;
    for (const auto& a : cfg_.course.assignments) assignments.emplace_back(a.name, a.labs);
    if (std::string note = partial_submission_note(*r.plan, assignments); !note.empty())
      g.notes.insert(g.notes.begin(), std::move(note));
  }
  for (std::size_t i = 0; i < g.labs.size(); ++i)
    if (const LabFiles* files = r.complete(i)) {
      std::vector<std::pair<std::string, std::string>> contents;
      for (const auto& [name, where] : files->found) contents.emplace_back(name, read_text(where));
      r.seeds[i] = derive_seed(key(), cfg_.seed, g.labs[i].spec->id, std::move(contents));
    }
  return r;
}

// The submission: a folder, or an archive unpacked into the slot's folder.
std::optional<fs::path> Grader::unpack(const fs::path& submission, int slot, SubmissionGrade& grade) {
  if (!fs::exists(submission)) {
    fail_all(grade, fmt::format("the submission {} does not exist", submission.string()));
    return std::nullopt;
  }
  if (!fs::is_regular_file(submission)) return submission;
  if (!is_archive(submission)) {
    fail_all(grade, fmt::format("{} is neither a folder nor a .zip, .tar.gz or .tar archive",
                                printable(submission.filename().string())));
    return std::nullopt;
  }
  const fs::path root = build(slot).parent_path() / "unpacked";
  fs::remove_all(root);
  std::string error;
  if (!extract_archive(submission, root, cfg_.source_root, grade.ignored, error)) {
    std::error_code ec;
    fs::remove_all(root, ec);  // what a refused archive left: nothing stays
    fail_all(grade, error);
    return std::nullopt;
  }
  return root;
}

// The student's files into the slot's overlay of the course (the skeleton
// where a file is missing).
void Grader::overlay_files(const Received& r, int slot) {
  std::string error;
  if (!ensure_configured(slot, error)) throw std::runtime_error(error);
  sync_overlay(&*r.plan, slot);
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
  if (r.root != r.submission) {
    std::error_code ec;
    fs::remove_all(r.root, ec);
  }
  if (!fs::exists(build(slot) / "harness" / "cudalab-gpuinfo")) {
    bool ignored = false;
    build_lab("cudalab-gpuinfo", slot, ignored);
  }
}

// What each lab's files include, then every lab built, then the policy of
// each built lab started.
Grader::Built Grader::build_labs(const Received& r, int slot) {
  const SubmissionGrade& g = r.grade;
  const std::size_t n = g.labs.size();
  Built b;
  // Before anything is compiled: an include from outside what a lab may
  // include rejects the lab unbuilt. Side by side: each lab's listing is one
  // preprocessor run.
  b.include_bad.assign(n, "");
  for_each_side_by_side(n, n, [&](std::size_t i) {
    if (r.complete(i)) b.include_bad[i] = include_problems(*g.labs[i].spec, slot);
  });
  const auto buildable = [&](std::size_t i) { return r.complete(i) && b.include_bad[i].empty(); };
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
  b.policies.resize(n);
  b.build_logs.assign(n, "");
  b.built.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (!buildable(i)) continue;
    // Where every lab built, each is built; where one did not, each is built
    // again alone (a no-op for those that did), so a failure's log is its own.
    bool ok = all_ok;
    if (!all_ok) b.build_logs[i] = build_lab(g.labs[i].spec->id + "-tests", slot, ok);
    b.built[i] = ok;
    // By its spec, which the course owns and outlives the future (not by the
    // grade, which moves on to settle_labs).
    if (ok)
      b.policies[i] = std::async(
          std::launch::async, [this, spec = g.labs[i].spec, slot] { return policy_problems(*spec, slot); });
  }
  return b;
}

// Each lab's status: missing, rejected (includes, policy), not built, or
// ready for its checks (with its CPU-mode build where the course grades in
// CPU mode).
Grader::Staged Grader::settle_labs(Received r, Built b, int slot) {
  Staged st;
  SubmissionGrade& g = r.grade;  // moved into st at the end: r.complete() reads its labs
  st.ready.assign(g.labs.size(), false);
  const auto reject = [](LabGrade& lab, const std::string& why) {
    lab.status = LabStatus::rejected;
    lab.message = "the lab was not run:\n" + why;
  };
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (!r.complete(i)) {
      std::string why;
      if (const LabFiles* files = r.plan->find(lab.spec->id))
        for (const auto& m : files->missing) why += (why.empty() ? "" : "; ") + m;
      lab.status = LabStatus::missing;
      lab.message = why;
      continue;
    }
    if (!b.include_bad[i].empty()) {
      reject(lab, b.include_bad[i]);
      continue;
    }
    if (!b.built[i]) {
      // A link error after a clean compile is often a call the lab forbids
      // (cuBLAS is not linked): the policy names it better than the linker.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/true); !bad.empty()) {
        reject(lab, bad);
        continue;
      }
      lab.status = LabStatus::build_failed;
      lab.message = "the lab did not compile:\n" + b.build_logs[i];
      continue;
    }
    if (const std::string bad = b.policies[i].get(); !bad.empty()) {
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
    st.ready[i] = true;
  }
  st.grade = std::move(r.grade);
  st.seeds = std::move(r.seeds);
  return st;
}

}  // namespace cudalab
