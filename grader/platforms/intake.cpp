#include "platforms/intake.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <system_error>

#include "core/files.h"
#include "core/late.h"

namespace fs = std::filesystem;

namespace cudalab {

std::optional<Platform> parse_platform(const std::string& name) {
  if (name == "gradescope") return Platform::gradescope;
  if (name == "prairielearn") return Platform::prairielearn;
  if (name == "classroom") return Platform::classroom;
  return std::nullopt;
}

const char* platform_name(Platform p) {
  switch (p) {
    case Platform::gradescope:
      return "gradescope";
    case Platform::prairielearn:
      return "prairielearn";
    case Platform::classroom:
      return "classroom";
  }
  return "?";
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    out += (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '@') ? static_cast<char>(c) : '_';
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row(1);
  bool quoted = false, any = false;
  std::size_t i = 0;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // a byte-order mark, as spreadsheets save it
  for (; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        row.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        row.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.emplace_back();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.push_back(std::move(row));
      row.assign(1, "");
      any = false;
    } else {
      row.back() += c;
    }
  }
  if (any) rows.push_back(std::move(row));
  // Blank lines are no rows.
  rows.erase(
      std::remove_if(rows.begin(), rows.end(), [](const auto& r) { return r.size() == 1 && r[0].empty(); }),
      rows.end());
  return rows;
}

namespace {

// A CSV file as header -> cell maps.
struct Table {
  fs::path file;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  bool has(const std::string& column) const {
    return std::find(header.begin(), header.end(), column) != header.end();
  }
};

std::optional<Table> read_table(const fs::path& file) {
  const std::optional<std::string> text = read_file(file);
  if (!text) return std::nullopt;
  const auto cells = parse_csv(*text);
  if (cells.empty()) return std::nullopt;
  Table t;
  t.file = file;
  t.header = cells[0];
  for (std::size_t r = 1; r < cells.size(); ++r) {
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < t.header.size(); ++c)
      row[t.header[c]] = c < cells[r].size() ? cells[r][c] : "";
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The CSV files in `dirs` whose header has every one of `columns`, in name order.
std::optional<Table> find_table(const std::vector<fs::path>& dirs, const std::vector<std::string>& columns) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& d : dirs)
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::optional<Table> t = read_table(f);
    if (t && std::all_of(columns.begin(), columns.end(), [&](const auto& c) { return t->has(c); })) return t;
  }
  return std::nullopt;
}

// The platform's time as ISO 8601, or an IntakeError naming where it was.
std::string iso_time(const std::string& text, const std::string& where) {
  std::string error;
  const std::optional<Instant> t = parse_instant(text, error);
  if (!t) throw IntakeError(fmt::format("{}: {}", where, error));
  return iso8601(*t);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::vector<fs::path> subfolders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// --- Gradescope ------------------------------------------------------------

std::string yaml_string(const YAML::Node& n) {
  return n && n.IsScalar() ? n.Scalar() : std::string{};
}

Intake read_gradescope(const fs::path& dir) {
  const fs::path meta = dir / "submission_metadata.yml";
  const std::optional<std::string> text = read_file(meta);
  if (!text)
    throw IntakeError(
        fmt::format("{}: not found: a Gradescope export (Export Submissions, unzipped) has it "
                    "beside its submission_<id>/ folders",
                    meta.string()));
  Intake in;
  in.platform = Platform::gradescope;
  in.handins = parse_gradescope_metadata(*text, meta.string(), dir);
  std::set<std::string> listed;
  for (const auto& h : in.handins) listed.insert(h.key);
  for (const auto& f : subfolders(dir)) {
    const std::string name = f.filename().string();
    if (name.rfind("submission_", 0) == 0 && !listed.count(name))
      in.warnings.push_back(
          fmt::format("{}: {}/ has no entry in submission_metadata.yml: not graded (who handed "
                      "it in is not known)",
                      dir.string(), name));
  }
  for (const auto& h : in.handins)
    if (!h.problem.empty()) in.warnings.push_back(fmt::format("{}: {}: {}", meta.string(), h.key, h.problem));
  return in;
}

// --- PrairieLearn ----------------------------------------------------------

// The zip's files: at the top of `dir` or in the one folder the zip holds
// (<set><number>/), CSV files aside.
std::vector<fs::path> prairielearn_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() != ".csv") out.push_back(e.path());
    if (e.is_directory())
      for (const auto& f : fs::directory_iterator(e.path(), ec))
        if (f.is_regular_file() && f.path().extension() != ".csv") out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// PrairieLearn's Usernames cell for a group (a list of uids, however written).
std::vector<std::string> uid_list(const std::string& cell) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : cell + ",") {
    if (c == ',' || c == ' ' || c == '[' || c == ']' || c == '"' || c == '{' || c == '}' || c == '\'') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// A file staged under its own name, written only where it is not already
// there as it is: the Slurm tasks of one batch each read the export again
// while others grade from the staged folders, and an unchanged file is
// never rewritten under them.
void stage_file(const fs::path& from, const fs::path& to) {
  const std::optional<std::string> text = read_file(from);
  if (!text) throw IntakeError(fmt::format("{}: cannot read", from.string()));
  if (read_file(to) == text) return;
  if (!write_text(to, *text))
    throw IntakeError(fmt::format("{}: cannot stage it as {}", from.string(), to.string()));
}

Intake read_prairielearn(const fs::path& dir, const fs::path& staging) {
  Intake in;
  in.platform = Platform::prairielearn;
  std::vector<fs::path> dirs = {dir};
  for (const auto& f : subfolders(dir)) dirs.push_back(f);
  // The submissions CSV (final, best or all): names, UINs, groups and dates by submission_id.
  const std::optional<Table> csv = find_table(dirs, {"submission_id", "Question", "Assessment instance"});
  std::map<std::string, const std::map<std::string, std::string>*> by_id;
  if (csv)
    for (const auto& row : csv->rows) by_id[row.at("submission_id")] = &row;
  struct Candidate {
    PrairieLearnFile part;
    fs::path path;
  };
  // owner + instance -> qid -> submission_id -> files
  std::map<std::pair<std::string, std::string>,
           std::map<std::string, std::map<std::string, std::vector<Candidate>>>>
      found;
  for (const auto& file : prairielearn_files(dir)) {
    const std::string name = file.filename().string();
    std::optional<PrairieLearnFile> part = parse_prairielearn_name(name);
    // Where the CSV knows the submission, the split must agree with it: a uid
    // or a qid with '_' in it parses more than one way.
    if (part && csv && !by_id.count(part->submission_id)) part.reset();
    if (!part) {
      in.warnings.push_back(fmt::format(
          "{}: not named <uid>_<instance>_<qid>_<variant>_<n>_<submission id>_<file> "
          "as PrairieLearn's downloads are{}: not graded",
          file.string(),
          csv ? fmt::format(" (or its submission is not in {})", csv->file.filename().string()) : ""));
      continue;
    }
    found[{part->owner, part->instance}][part->qid][part->submission_id].push_back({*part, file});
  }
  for (auto& [owner_instance, questions] : found) {
    const auto& [owner, instance] = owner_instance;
    HandIn h;
    h.key = safe_name(owner + "_" + instance);
    h.record.platform = "prairielearn";
    const fs::path folder = staging / h.key;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw IntakeError(fmt::format("{}: cannot create: {}", folder.string(), ec.message()));
    h.files = folder;
    std::string latest_time;
    std::int64_t latest_ms = 0;
    std::vector<std::string> ids;
    for (auto& [qid, subs] : questions) {
      // The final submission per question: the latest date where the CSV
      // gives dates, else the highest submission id (ids grow with time).
      std::string best;
      std::int64_t best_ms = 0;
      for (const auto& [id, files] : subs) {
        std::int64_t ms = 0;
        if (by_id.count(id) && by_id.at(id)->count("Submission date")) {
          const std::string& date = by_id.at(id)->at("Submission date");
          std::string error;
          const auto t = parse_instant(date, error);
          if (!t)
            throw IntakeError(
                fmt::format("{}: submission_id {}: Submission date: {}", csv->file.string(), id, error));
          ms = t->utc_ms;
        }
        const bool later =
            best.empty() || ms > best_ms ||
            (ms == best_ms && (id.size() > best.size() || (id.size() == best.size() && id > best)));
        if (later) best = id, best_ms = ms;
      }
      QuestionSubmission q;
      q.qid = qid;
      q.instance = instance;
      q.submission_id = best;
      for (const auto& c : subs[best]) {
        q.files.push_back(c.part.name);
        stage_file(c.path, folder / c.part.name);
      }
      ids.push_back(best);
      if (by_id.count(best)) {
        const auto& row = *by_id.at(best);
        if (row.count("Submission date") && (latest_time.empty() || best_ms > latest_ms))
          latest_time = iso_time(row.at("Submission date"),
                                 fmt::format("{}: submission_id {}", csv->file.string(), best)),
          latest_ms = best_ms;
        if (h.record.submitters.empty()) {
          if (row.count("Group name") && !row.at("Group name").empty()) {
            h.group = row.at("Group name");
            for (const auto& uid : uid_list(row.count("Usernames") ? row.at("Usernames") : ""))
              h.record.submitters.push_back({"", "", "", uid});
          } else {
            const auto cell = [&](const char* k) { return row.count(k) ? row.at(k) : std::string{}; };
            h.record.submitters.push_back({cell("Name"), cell("UIN"), "", cell("UID")});
          }
        }
      }
      h.questions.push_back(std::move(q));
    }
    // Files of an earlier staging that are no longer the final ones go.
    std::set<std::string> keep;
    for (const auto& q : h.questions) keep.insert(q.files.begin(), q.files.end());
    std::vector<fs::path> stale;
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (!keep.count(e.path().filename().string())) stale.push_back(e.path());
    for (const auto& p : stale) fs::remove_all(p, ec);
    if (h.record.submitters.empty()) h.record.submitters.push_back({"", "", "", owner});
    h.record.time = latest_time;
    h.record.id = fmt::format("{}", fmt::join(ids, " "));
    in.handins.push_back(std::move(h));
  }
  if (in.handins.empty() && !in.warnings.empty())
    throw IntakeError(
        fmt::format("{}: none of its files is named as PrairieLearn's downloads are ({} files "
                    "passed over; the first: {})",
                    dir.string(), in.warnings.size(), in.warnings.front()));
  return in;
}

// --- GitHub Classroom ------------------------------------------------------

Intake read_classroom(const fs::path& dir) {
  Intake in;
  in.platform = Platform::classroom;
  // `gh classroom clone student-repos` makes <slug>-submissions/; given the
  // folder above it, go in.
  fs::path repos = dir;
  std::string slug;
  const auto ends_with = [](const std::string& s, const std::string& e) {
    return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  if (!ends_with(dir.filename().string(), "-submissions")) {
    std::vector<fs::path> inner;
    for (const auto& f : subfolders(dir))
      if (ends_with(f.filename().string(), "-submissions")) inner.push_back(f);
    if (inner.size() == 1) repos = inner.front();
  }
  const std::string base = repos.filename().string();
  if (ends_with(base, "-submissions"))
    slug = base.substr(0, base.size() - std::string("-submissions").size());
  const std::optional<Table> csv =
      find_table({dir, repos}, {"github_username", "student_repository_name", "submission_timestamp"});
  std::map<std::string, fs::path> cloned;
  for (const auto& f : subfolders(repos)) cloned[f.filename().string()] = f;
  std::map<std::string, HandIn> by_repo;
  if (csv) {
    for (std::size_t r = 0; r < csv->rows.size(); ++r) {
      const auto& row = csv->rows[r];
      const auto cell = [&](const char* k) { return row.count(k) ? row.at(k) : std::string{}; };
      const std::string repo = cell("student_repository_name");
      const std::string login = cell("github_username");
      const std::string where = fmt::format("{}: row {} ({})", csv->file.string(), r + 2,
                                            login.empty() ? cell("roster_identifier") : login);
      if (login.empty() && cell("roster_identifier").empty())
        throw IntakeError(where + ": neither github_username nor roster_identifier");
      HandIn& h =
          by_repo[repo.empty() ? "(not accepted) " + (login.empty() ? cell("roster_identifier") : login)
                               : repo];
      h.record.platform = "classroom";
      h.record.submitters.push_back({"", cell("roster_identifier"), "", login});
      std::vector<std::pair<std::string, std::string>> copy;
      for (const auto& column : csv->header) copy.emplace_back(column, cell(column.c_str()));
      h.platform_rows.push_back(std::move(copy));
      if (!cell("group_name").empty()) h.group = cell("group_name");
      if (!cell("submission_timestamp").empty())
        h.record.time = iso_time(cell("submission_timestamp"), where + ": submission_timestamp");
      if (repo.empty()) {
        h.key = safe_name("not-accepted-" + (login.empty() ? cell("roster_identifier") : login));
        h.problem = "did not accept the assignment (no repository)";
      } else {
        h.key = safe_name(repo);
        if (cloned.count(repo))
          h.files = cloned.at(repo);
        else
          h.problem = fmt::format("no repository {} in {} (not cloned?)", repo, repos.string());
      }
    }
    for (const auto& [name, path] : cloned)
      if (!by_repo.count(name))
        in.warnings.push_back(fmt::format("{}: {}/ is not in {}: not graded (who handed it in is not known)",
                                          repos.string(), name, csv->file.string()));
  } else {
    // No grades CSV: the login from the folder's name; no time, so no late rule.
    for (const auto& [name, path] : cloned) {
      if (name.rfind('.', 0) == 0) continue;
      HandIn& h = by_repo[name];
      h.key = safe_name(name);
      h.files = path;
      h.record.platform = "classroom";
      const std::string login =
          !slug.empty() && name.rfind(slug + "-", 0) == 0 ? name.substr(slug.size() + 1) : name;
      h.record.submitters.push_back({"", "", "", login});
    }
  }
  for (auto& [repo, h] : by_repo) {
    if (!h.problem.empty()) in.warnings.push_back(fmt::format("{}: {}", h.key, h.problem));
    in.handins.push_back(std::move(h));
  }
  return in;
}

}  // namespace

std::vector<HandIn> parse_gradescope_metadata(const std::string& yaml, const std::string& source,
                                              const fs::path& dir) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw IntakeError(fmt::format("{}: not valid YAML: {}", source, e.what()));
  }
  if (!root.IsMap())
    throw IntakeError(
        fmt::format("{}: expected a map of submission_<id>: entries, as Gradescope writes it", source));
  std::vector<HandIn> out;
  for (const auto& kv : root) {
    const std::string key = yaml_string(kv.first);
    const std::string where = fmt::format("{}: {}", source, key);
    if (key.rfind("submission_", 0) != 0 || key.size() == std::string("submission_").size())
      throw IntakeError(fmt::format("{}: not a submission_<id> entry", where));
    const YAML::Node& entry = kv.second;
    if (!entry.IsMap()) throw IntakeError(where + ": expected :submitters:, :created_at: and the rest");
    HandIn h;
    h.key = safe_name(key);
    h.record.platform = "gradescope";
    h.record.id = key.substr(std::string("submission_").size());
    const YAML::Node who = entry[":submitters"];
    if (!who || !who.IsSequence() || who.size() == 0)
      throw IntakeError(where + ": :submitters: is missing or empty (a list of :name:, :sid:, :email:)");
    for (std::size_t i = 0; i < who.size(); ++i) {
      if (!who[i].IsMap())
        throw IntakeError(fmt::format("{}: :submitters: entry {} is not a map", where, i + 1));
      Submitter s{yaml_string(who[i][":name"]), yaml_string(who[i][":sid"]), yaml_string(who[i][":email"]),
                  ""};
      if (s.sid.empty() && s.email.empty())
        throw IntakeError(fmt::format("{}: submitter {} ({}) has neither :sid: nor :email:", where, i + 1,
                                      s.name.empty() ? "no name" : s.name));
      h.record.submitters.push_back(s);
    }
    const std::string created = yaml_string(entry[":created_at"]);
    if (created.empty()) throw IntakeError(where + ": :created_at: is missing");
    h.record.time = iso_time(created, where + ": :created_at:");
    const fs::path folder = dir / key;
    std::error_code ec;
    if (fs::is_directory(folder, ec))
      h.files = folder;
    else
      h.problem = fmt::format("no folder {}/ in the export", key);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const HandIn& a, const HandIn& b) { return a.key < b.key; });
  return out;
}

std::optional<PrairieLearnFile> parse_prairielearn_name(const std::string& file) {
  std::vector<std::string> t;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= file.size(); ++i)
    if (i == file.size() || file[i] == '_') t.push_back(file.substr(start, i - start)), start = i + 1;
  // owner (1+ parts) _ instance _ qid (1+ parts) _ variant _ n _ submission id _ file (1+ parts):
  // the first all-digit part after the owner is the instance; the first three
  // all-digit parts after the qid are variant, number and id.
  for (std::size_t a = 1; a + 5 < t.size(); ++a) {
    if (!all_digits(t[a])) continue;
    for (std::size_t b = a + 2; b + 3 < t.size(); ++b) {
      if (!all_digits(t[b]) || !all_digits(t[b + 1]) || !all_digits(t[b + 2])) continue;
      const auto join = [&](std::size_t from, std::size_t to) {
        std::string s;
        for (std::size_t k = from; k < to; ++k) s += (k > from ? "_" : "") + t[k];
        return s;
      };
      PrairieLearnFile p{join(0, a), t[a], join(a + 1, b), t[b], t[b + 1], t[b + 2], join(b + 3, t.size())};
      if (p.owner.empty() || p.qid.empty() || p.name.empty()) continue;
      return p;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

Intake read_export(Platform platform, const fs::path& dir, const fs::path& staging) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw IntakeError(fmt::format("{}: not a folder (unzip the platform's export first)", dir.string()));
  Intake in;
  switch (platform) {
    case Platform::gradescope:
      in = read_gradescope(dir);
      break;
    case Platform::prairielearn:
      in = read_prairielearn(dir, staging);
      break;
    case Platform::classroom:
      in = read_classroom(dir);
      break;
  }
  std::sort(in.handins.begin(), in.handins.end(),
            [](const HandIn& a, const HandIn& b) { return a.key < b.key; });
  for (std::size_t i = 1; i < in.handins.size(); ++i)
    if (in.handins[i].key == in.handins[i - 1].key)
      throw IntakeError(fmt::format("{}: two submissions have the key {}", dir.string(), in.handins[i].key));
  return in;
}

}  // namespace cudalab
