#include "run/submission.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "run/process.h"

namespace fs = std::filesystem;

namespace cudalab {

const LabFiles* SubmissionPlan::find(const std::string& lab) const {
  for (const auto& l : labs)
    if (l.lab == lab) return &l;
  return nullptr;
}

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

bool is_archive(const fs::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const char* suf) {
    const std::string s(suf);
    return n.size() > s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".zip") || ends(".tar.gz") || ends(".tgz") || ends(".tar");
}

namespace {

struct Candidate {
  fs::path path;
  std::string rel;
  int rank;  // lower is better: 0 labs/<lab>/f, 1 <lab>/f anywhere, 2 top-level f, 3 nested f
};

int rank_of(const std::vector<std::string>& parts, const std::string& lab) {
  const std::size_t n = parts.size();
  if (n >= 3 && parts[n - 3] == "labs" && parts[n - 2] == lab) return 0;
  if (n >= 2 && parts[n - 2] == lab) return 1;
  if (n == 1) return 2;
  return 3;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Edits (insert, delete, replace, swap two neighbours) from a to b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool is_source_extension(const std::string& ext) {
  for (const char* e : {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh"})
    if (ext == e) return true;
  return false;
}

}  // namespace

std::optional<NearName> near_student_file(const std::string& name,
                                          const std::vector<std::string>& student_files) {
  std::optional<NearName> best;
  int best_rank = 0;
  const fs::path p(name);
  const std::string lname = lower(name), lstem = lower(p.stem().string()),
                    lext = lower(p.extension().string());
  for (const auto& want : student_files) {
    if (want == name) return std::nullopt;  // it is one
    const fs::path w(want);
    int rank = 0;
    std::string how;
    if (lower(want) == lname) {
      rank = 1;
      how = "differs from it only in upper and lower case";
    } else if (lower(w.stem().string()) == lstem && is_source_extension(lext) &&
               is_source_extension(lower(w.extension().string()))) {
      rank = 2;
      how = fmt::format("has the extension {} where the lab's file has {}", p.extension().string(),
                        w.extension().string());
    } else if (want.size() >= 6) {
      const std::size_t d = edit_distance(lname, lower(want));
      if (d > kNearNameEdits) continue;
      rank = 2 + static_cast<int>(d);
      how = fmt::format("is {} letter{} away from it", d, d == 1 ? "" : "s");
    } else {
      continue;
    }
    if (!best || rank < best_rank) best = NearName{want, how}, best_rank = rank;
  }
  return best;
}

SubmissionPlan plan_submission(const fs::path& root, const std::vector<LabSpec>& labs,
                               const std::vector<std::string>& outside) {
  SubmissionPlan plan;
  plan.root = root;
  // Which lab wants each student file name, and which names are course files.
  std::map<std::string, std::vector<const LabSpec*>> wanted;
  std::map<std::string, std::string> course_files;
  for (const auto& lab : labs) {
    for (const auto& f : lab.student_files) wanted[f].push_back(&lab);
    for (const auto& f : lab.tests) course_files[f] = "tests always come from the course";
  }
  course_files["lab.toml"] = "the course's lab.toml is used";
  std::vector<std::string> student_names;
  for (const auto& [name, of] : wanted) student_names.push_back(name);
  // Files named close to a lab's student file (Matmul_Tiled.cu): named in
  // the lab's message and in the ignored list, never graded.
  struct Misnamed {
    std::string rel, how;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Misnamed>> misnamed;  // (lab, file)

  std::map<std::pair<std::string, std::string>, std::vector<Candidate>> candidates;  // (lab, file)
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    plan.notes.push_back(fmt::format("cannot read the submission: {}", ec.message()));
  }
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    const std::string rel = printable(p.lexically_relative(root).generic_string());
    const std::string name = p.filename().string();
    if (it->is_symlink()) {
      plan.ignored.push_back(fmt::format("{}: a symbolic link (links are never followed)", rel));
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      if (name == ".git" || name == "__MACOSX" || name == "build" || name == ".vscode") {
        plan.ignored.push_back(fmt::format("{}/: not part of a submission", rel));
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!it->is_regular_file()) {
      plan.ignored.push_back(fmt::format("{}: not a regular file", rel));
      continue;
    }
    std::vector<std::string> parts;
    for (const auto& part : p.lexically_relative(root)) parts.push_back(part.string());
    auto w = wanted.find(name);
    if (w == wanted.end() && std::find(outside.begin(), outside.end(), name) != outside.end()) continue;
    if (w == wanted.end()) {
      auto c = course_files.find(name);
      if (c != course_files.end()) {
        plan.ignored.push_back(fmt::format("{}: {}", rel, c->second));
      } else if (const auto near = near_student_file(name, student_names)) {
        // Most likely the lab whose folder it is in, else the first that wants it.
        const auto& labs_of = wanted[near->name];
        const LabSpec* lab = labs_of.front();
        for (const LabSpec* l : labs_of)
          if (std::find(parts.begin(), parts.end(), l->id) != parts.end()) lab = l;
        misnamed[{lab->id, near->name}].push_back({rel, near->how});
      } else {
        plan.ignored.push_back(fmt::format("{}: not a student file of any lab", rel));
      }
      continue;
    }
    for (const LabSpec* lab : w->second)
      candidates[{lab->id, name}].push_back({p, rel, rank_of(parts, lab->id)});
  }

  for (const auto& lab : labs) {
    LabFiles lf;
    lf.lab = lab.id;
    for (const auto& f : lab.student_files) {
      auto& cands = candidates[{lab.id, f}];
      std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.rel < b.rel;
      });
      // Files of another lab's folder are not this lab's (two labs may share a name).
      cands.erase(
          std::remove_if(cands.begin(), cands.end(),
                         [&](const Candidate& c) {
                           if (c.rank <= 2) return false;
                           for (const auto& other : labs)
                             if (other.id != lab.id && c.rel.find(other.id + "/") != std::string::npos)
                               return true;
                           return false;
                         }),
          cands.end());
      // A file named close to it is not used: the grade is of the files the
      // lab names, and a guess could grade the wrong file. It is named, with
      // what it must be called.
      const auto near = misnamed.find({lab.id, f});
      if (near != misnamed.end())
        for (const auto& m : near->second)
          plan.ignored.push_back(
              cands.empty()
                  ? fmt::format(
                        "{}: not graded: did you mean labs/{}/{}? Its name {}; the grader uses a student "
                        "file only under its exact name: rename it to {}",
                        m.rel, lab.id, f, m.how, f)
                  : fmt::format("{}: not a student file of any lab (its name is close to {}'s {}, which was "
                                "graded from {})",
                                m.rel, lab.id, f, cands.front().rel));
      if (cands.empty()) {
        std::string why =
            fmt::format("missing {} (expected at labs/{}/{} or at the top of the submission)", f, lab.id, f);
        if (near != misnamed.end())
          why += fmt::format(": {} looks like it, but is not graded under that name; rename it to {}",
                             near->second.front().rel, f);
        lf.missing.push_back(why);
        continue;
      }
      const Candidate& best = cands.front();
      for (std::size_t i = 1; i < cands.size(); ++i)
        plan.ignored.push_back(fmt::format("{}: a second copy of {}; graded: {}", cands[i].rel, f, best.rel));
      std::error_code sec;
      const auto size = fs::file_size(best.path, sec);
      if (sec || size > kMaxStudentFileBytes) {
        lf.missing.push_back(
            fmt::format("{} is {} bytes, over the {} byte limit for a source file: not graded", best.rel,
                        sec ? 0 : size, kMaxStudentFileBytes));
        continue;
      }
      lf.found.emplace_back(f, best.path);
    }
    plan.labs.push_back(std::move(lf));
  }
  std::sort(plan.ignored.begin(), plan.ignored.end());
  return plan;
}

namespace {

// The extractor's one line when it refused the archive (exit code 2: its
// documented refusal); otherwise what happened, never its output, which
// could be a Python traceback.
std::string extractor_failure(const ProcessResult& p) {
  if (!p.started) return fmt::format("python3 could not be started to unpack it ({})", p.error);
  if (p.timed_out) return fmt::format("unpacking it took more than {:g} s", kExtractLimit_s);
  if (p.signal == 0 && p.exit_code == 2 &&
      p.output.find("Traceback (most recent call last)") == std::string::npos) {
    std::string last;
    std::istringstream in(p.output);
    for (std::string line; std::getline(in, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    if (!last.empty()) return printable(last.substr(0, 300));
  }
  return fmt::format("the archive could not be unpacked (the extractor failed: {})", p.describe());
}

}  // namespace

bool extract_archive(const fs::path& archive, const fs::path& dest, const fs::path& source_root,
                     std::vector<std::string>& ignored, std::string& error) {
  ProcessOptions opt;
  // -I: no PYTHON* variables, user site or script folder on the path: only
  // the standard library runs. "--" before the paths: a name starting with
  // "--" is a name.
  opt.argv = {"python3",
              "-I",
              (source_root / "tools" / "extract.py").string(),
              "--max-members",
              std::to_string(kMaxArchiveMembers),
              "--max-total-bytes",
              std::to_string(kMaxArchiveBytes),
              "--max-ratio",
              std::to_string(kMaxArchiveRatio),
              "--max-depth",
              std::to_string(kMaxArchiveDepth),
              "--",
              archive.string(),
              dest.string(),
              std::to_string(kMaxArchiveMemberBytes)};
  opt.timeout_s = kExtractLimit_s;
  opt.output_cap = kMaxExtractOutputBytes;
  const ProcessResult p = run_process(opt);
  if (!p.ok()) {
    error = fmt::format("cannot unpack {}: {}", printable(archive.filename().string()), extractor_failure(p));
    return false;
  }
  std::istringstream in(p.output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("skipped\t", 0) != 0) continue;
    const auto tab = line.find('\t', 8);
    ignored.push_back(fmt::format("{}: {}", printable(line.substr(8, tab - 8)),
                                  tab == std::string::npos ? "skipped" : printable(line.substr(tab + 1))));
  }
  return true;
}

std::string partial_submission_note(
    const SubmissionPlan& plan,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& assignments) {
  std::vector<std::string> handed_in, absent;
  for (const LabFiles& l : plan.labs) (l.found.empty() ? absent : handed_in).push_back(l.lab);
  if (handed_in.empty() || absent.empty()) return "";
  // The assignments this submission's labs fit, best first: those whose labs are all here.
  std::vector<std::string> fitting, all;
  for (const auto& [name, labs] : assignments) {
    all.push_back(fmt::format("{} ({})", name, fmt::join(labs, ", ")));
    const bool fits = std::all_of(labs.begin(), labs.end(), [&](const std::string& l) {
      return std::find(handed_in.begin(), handed_in.end(), l) != handed_in.end();
    });
    if (fits) fitting.push_back(name);
  }
  std::string how;
  if (!fitting.empty())
    how = fmt::format(
        "grade it as its assignment: cudalab grade SUBMISSION --assignment {}{}", fitting.front(),
        fitting.size() > 1 ? fmt::format(" (or {})", fmt::join(fitting.begin() + 1, fitting.end(), ", "))
                           : "");
  else if (!all.empty())
    how = fmt::format("grade it as one of the course's assignments with --assignment NAME: {}",
                      fmt::join(all, "; "));
  else
    how =
        "define the assignment in the course file ([[assignment]] with its labs, docs/course.md) and grade "
        "with "
        "--assignment NAME";
  return fmt::format(
      "graded as the whole course, with no assignment chosen: {} {} none of {} files here and {} counted as "
      "missing, with none of {} points. If this was handed in for {} alone, {}.",
      fmt::join(absent, ", "), absent.size() == 1 ? "has" : "have", absent.size() == 1 ? "its" : "their",
      absent.size() == 1 ? "is" : "are", absent.size() == 1 ? "its" : "their", fmt::join(handed_in, " and "),
      how);
}

}  // namespace cudalab
