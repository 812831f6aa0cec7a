// Which files of a submission are graded, and which are ignored.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudalab/catch.h"
#include "run/process.h"
#include "run/submission.h"

using namespace cudalab;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("cudalab-sub-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& rel, const std::string& text = "// code\n") const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
  static inline int counter = 0;
};

std::vector<LabSpec> labs() {
  LabSpec a;
  a.id = "03_tiling";
  a.student_files = {"matmul_tiled.cu"};
  a.tests = {"test_tiling.cpp"};
  LabSpec b;
  b.id = "02_naive_matmul";
  b.student_files = {"matmul_naive.cu"};
  b.tests = {"test_naive_matmul.cpp"};
  return {a, b};
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

// Where tools/extract.py is.
fs::path source_root() {
  return CUDALAB_SOURCE_ROOT;
}

// Builds an archive at `path` with Python's zipfile or tarfile (there wherever
// the tests run): `code` calls zip_of or tgz_of with (name, bytes) pairs.
void make_archive(const fs::path& path, const std::string& code) {
  static const std::string prelude = R"(import io, sys, tarfile, zipfile
path = sys.argv[1]
def zip_of(members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
def tgz_of(members, links=()):
    with tarfile.open(path, "w:gz") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            t.addfile(info)
MiB = 1 << 20
)";
  ProcessOptions o;
  o.argv = {"python3", "-c", prelude + code, path.string()};
  o.timeout_s = 120;
  const ProcessResult r = run_process(o);
  INFO(r.output);
  REQUIRE(r.ok());
}

struct Unpacked {
  bool ok = false;
  std::string error;
  std::vector<std::string> ignored;
  fs::path dest;
};

Unpacked unpack(const TempDir& d, const std::string& archive) {
  Unpacked u;
  u.dest = d.path / "unpacked";
  u.ok = extract_archive(d.path / archive, u.dest, source_root(), u.ignored, u.error);
  return u;
}

bool nothing_in(const fs::path& dir) {
  return !fs::exists(dir) || fs::is_empty(dir);
}

}  // namespace

TEST_CASE("A submission in repo layout gives each lab its student file", "[submission][grader]") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/02_naive_matmul/matmul_naive.cu");
  const auto plan = plan_submission(d.path, labs());
  REQUIRE(plan.find("03_tiling"));
  CHECK(plan.find("03_tiling")->complete());
  CHECK(plan.find("03_tiling")->found[0].second == d.path / "labs/03_tiling/matmul_tiled.cu");
  CHECK(plan.find("02_naive_matmul")->complete());
  CHECK(plan.ignored.empty());
}

TEST_CASE("An assignment's grade passes over the files of the course's other labs without a word",
          "[submission][grader]") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/01_coalescing/coalescing.cu");
  d.write("labs/01_coalescing/test_coalescing.cpp");
  d.write("notes.txt");
  const std::vector<LabSpec> hw3 = {labs()[0]};
  const auto plan = plan_submission(d.path, hw3, {"coalescing.cu", "test_coalescing.cpp"});
  CHECK(plan.find("03_tiling")->complete());
  CHECK_FALSE(plan.find("02_naive_matmul"));
  CHECK_FALSE(mentions(plan.ignored, "coalescing"));
  CHECK(mentions(plan.ignored, "notes.txt"));  // what belongs to no lab is still named
  // Without the course's other labs named, they are named as files of no lab.
  CHECK(mentions(plan_submission(d.path, hw3).ignored, "coalescing.cu: not a student file of any lab"));
}

TEST_CASE("A flat submission and one nested one folder deep are both found", "[submission][grader]") {
  TempDir flat, nested;
  flat.write("matmul_tiled.cu");
  nested.write("alice-lab3/matmul_tiled.cu");
  CHECK(plan_submission(flat.path, labs()).find("03_tiling")->complete());
  CHECK(plan_submission(nested.path, labs()).find("03_tiling")->complete());
}

TEST_CASE("A missing student file is reported for its lab only", "[submission][grader]") {
  TempDir d;
  d.write("matmul_tiled.cu");
  const auto plan = plan_submission(d.path, labs());
  CHECK(plan.find("03_tiling")->complete());
  const auto* naive = plan.find("02_naive_matmul");
  CHECK_FALSE(naive->complete());
  CHECK_THAT(naive->missing[0], Catch::Contains("missing matmul_naive.cu"));
}

TEST_CASE("Test files, manifests and other files in a submission are ignored with the reason",
          "[submission][grader]") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/03_tiling/test_tiling.cpp", "TEST_CASE(\"always passes\") {}");
  d.write("labs/03_tiling/lab.toml", "[lab]\n");
  d.write("notes.txt");
  d.write(".git/config");
  const auto plan = plan_submission(d.path, labs());
  CHECK(mentions(plan.ignored, "labs/03_tiling/test_tiling.cpp: tests always come from the course"));
  CHECK(mentions(plan.ignored, "labs/03_tiling/lab.toml: the course's lab.toml is used"));
  CHECK(mentions(plan.ignored, "notes.txt: not a student file of any lab"));
  CHECK(mentions(plan.ignored, ".git/: not part of a submission"));
}

TEST_CASE("Of two copies of a file the one in repo layout is graded and the other listed",
          "[submission][grader]") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu", "// the right one\n");
  d.write("old/matmul_tiled.cu", "// an old one\n");
  const auto plan = plan_submission(d.path, labs());
  CHECK(plan.find("03_tiling")->found[0].second == d.path / "labs/03_tiling/matmul_tiled.cu");
  CHECK(mentions(plan.ignored, "old/matmul_tiled.cu: a second copy of matmul_tiled.cu"));
}

TEST_CASE("A student file over the size limit is not graded", "[submission][grader]") {
  TempDir d;
  d.write("matmul_tiled.cu", std::string(kMaxStudentFileBytes + 1, 'x'));
  const auto plan = plan_submission(d.path, labs());
  const auto* lab = plan.find("03_tiling");
  REQUIRE_FALSE(lab->complete());
  CHECK_THAT(lab->missing[0], Catch::Contains("over the") && Catch::Contains("limit"));
}

TEST_CASE("An empty submission misses every lab's file", "[submission][grader]") {
  TempDir d;
  const auto plan = plan_submission(d.path, labs());
  for (const auto& lab : plan.labs) CHECK_FALSE(lab.complete());
}

TEST_CASE("Odd file names are printed escaped and links are never followed", "[submission][grader]") {
  TempDir d;
  d.write("matmul_tiled.cu");
  d.write(std::string("we\x01ird\xff name.cu"));
  fs::create_symlink("/etc/passwd", d.path / "link.cu");
  const auto plan = plan_submission(d.path, labs());
  CAPTURE(plan.ignored);
  CHECK(mentions(plan.ignored, "we\\x01ird\\xff name.cu"));
  CHECK(mentions(plan.ignored, "link.cu: a symbolic link"));
}

TEST_CASE("Archive names are recognised by their extension", "[submission][grader]") {
  CHECK(is_archive("a.zip"));
  CHECK(is_archive("alice.tar.gz"));
  CHECK(is_archive("b.tgz"));
  CHECK_FALSE(is_archive("matmul_tiled.cu"));
  CHECK_FALSE(is_archive(".zip"));
}

TEST_CASE("A zip bomb of many members each under the member limit is refused by the total",
          "[submission][archive][grader]") {
  TempDir d;
  // 40 members of 9 MiB zeros: 360 MiB unpacked from a few hundred KiB.
  make_archive(d.path / "bomb.zip",
               "zero = bytes(9 * MiB)\nzip_of([(f'f{i}.bin', zero) for i in range(40)])");
  const Unpacked u = unpack(d, "bomb.zip");
  CHECK_FALSE(u.ok);
  CHECK(u.error ==
        "cannot unpack bomb.zip: the archive unpacks to more than 64 MiB (a submission may unpack to at most "
        "64 MiB)");
  CHECK(nothing_in(u.dest));
}

TEST_CASE("A tar.gz bomb is refused by the total before it is decompressed whole",
          "[submission][archive][grader]") {
  TempDir d;
  make_archive(d.path / "bomb.tar.gz",
               "zero = bytes(9 * MiB)\ntgz_of([(f'f{i}.bin', zero) for i in range(40)])");
  const Unpacked u = unpack(d, "bomb.tar.gz");
  CHECK_FALSE(u.ok);
  CHECK_THAT(u.error, Catch::StartsWith("cannot unpack bomb.tar.gz: the archive unpacks to more than 64 MiB "
                                        "(a submission may unpack to at most 64 MiB)"));
  CHECK(nothing_in(u.dest));
}

TEST_CASE("An archive of more than 2000 members is refused whole, one of 2000 is read",
          "[submission][archive][grader]") {
  TempDir d;
  make_archive(d.path / "flood.zip", "zip_of([(f'f{i}', b'x') for i in range(2001)])");
  make_archive(d.path / "full.zip",
               "zip_of([(f'f{i}', b'x') for i in range(1999)] + [('matmul_tiled.cu', b'//')])");
  const Unpacked flood = unpack(d, "flood.zip");
  CHECK_FALSE(flood.ok);
  CHECK_THAT(flood.error, Catch::StartsWith("cannot unpack flood.zip: the archive has more than 2000 members "
                                            "(a submission may have at most 2000)"));
  CHECK(nothing_in(flood.dest));
  const Unpacked full = unpack(d, "full.zip");
  INFO(full.error);
  CHECK(full.ok);
  CHECK(fs::exists(full.dest / "matmul_tiled.cu"));
}

TEST_CASE("Members too big, too compressed, too deep or oddly named are skipped with the reason",
          "[submission][archive][grader]") {
  TempDir d;
  make_archive(d.path / "odd.zip", R"(zip_of([
    ('big.bin', bytes(20 * MiB)),
    ('zeros.bin', bytes(5 * MiB)),
    ('/'.join(['d'] * 20) + '/deep.cu', b'x'),
    ('x' * 300 + '/long.cu', b'x'),
    ('bell\x07.cu', b'x'),
    ('../../escaped.cu', b'x'),
    ('labs/03_tiling/matmul_tiled.cu', b'// code'),
]))");
  const Unpacked u = unpack(d, "odd.zip");
  REQUIRE(u.ok);
  CAPTURE(u.ignored);
  CHECK(mentions(u.ignored, "big.bin: 20971520 bytes, over the 10485760 byte limit"));
  CHECK(mentions(u.ignored, "zeros.bin: compression ratio over 100:1"));
  CHECK(mentions(u.ignored, "deep.cu: deeper than 16 folders"));
  CHECK(mentions(u.ignored, "...: name too long"));  // the name cut to 200 characters
  CHECK(mentions(u.ignored, "bell\\x07.cu: name with control characters"));
  CHECK(mentions(u.ignored, "escaped.cu: unsafe path"));
  CHECK(u.ignored.size() == 6);
  CHECK(fs::exists(u.dest / "labs/03_tiling/matmul_tiled.cu"));
  CHECK_FALSE(fs::exists(u.dest / "big.bin"));
  CHECK_FALSE(fs::exists(u.dest / "zeros.bin"));
  CHECK(plan_submission(u.dest, labs()).find("03_tiling")->complete());
}

TEST_CASE("At most 100 skipped members are listed, then their count", "[submission][archive][grader]") {
  TempDir d;
  make_archive(d.path / "many.zip",
               "zip_of([(f'../x{i}', b'x') for i in range(150)] + [('matmul_tiled.cu', b'//')])");
  const Unpacked u = unpack(d, "many.zip");
  REQUIRE(u.ok);
  REQUIRE(u.ignored.size() == 101);
  CHECK(u.ignored.back() == "...: 50 more members skipped");
}

TEST_CASE("An honest zip and tar.gz unpack, their links and big members skipped",
          "[submission][archive][grader]") {
  TempDir d;
  make_archive(d.path / "alice.zip",
               "zip_of([('labs/03_tiling/matmul_tiled.cu', b'// code'), ('matmul_naive.cu', b'// code')])");
  make_archive(d.path / "bob.tar.gz",
               "tgz_of([('bob/matmul_tiled.cu', b'// code'), ('bob/big.bin', bytes(20 * MiB))], "
               "links=[('bob/link.cu', '/etc/passwd')])");
  const Unpacked alice = unpack(d, "alice.zip");
  REQUIRE(alice.ok);
  CHECK(alice.ignored.empty());
  const auto plan = plan_submission(alice.dest, labs());
  CHECK(plan.find("03_tiling")->complete());
  CHECK(plan.find("02_naive_matmul")->complete());
  fs::remove_all(alice.dest);
  const Unpacked bob = unpack(d, "bob.tar.gz");
  REQUIRE(bob.ok);
  CAPTURE(bob.ignored);
  CHECK(mentions(bob.ignored, "bob/big.bin: 20971520 bytes, over the 10485760 byte limit"));
  CHECK(mentions(bob.ignored, "bob/link.cu: not a regular file"));
  CHECK_FALSE(fs::exists(bob.dest / "bob/link.cu"));
  CHECK(plan_submission(bob.dest, labs()).find("03_tiling")->complete());
}

TEST_CASE("A file that is no archive is refused in one line, never a traceback",
          "[submission][archive][grader]") {
  TempDir d;
  d.write("erin.zip", "not a zip at all\n");
  d.write("broken.tar.gz", "\x1f\x8b not gzip either");
  for (const char* name : {"erin.zip", "broken.tar.gz"}) {
    const Unpacked u = unpack(d, name);
    CAPTURE(u.error);
    CHECK_FALSE(u.ok);
    CHECK_THAT(u.error, Catch::StartsWith(std::string("cannot unpack ") + name + ": "));
    CHECK(u.error.find('\n') == std::string::npos);
    CHECK(u.error.find("Traceback") == std::string::npos);
  }
}

TEST_CASE("A student file handed in under a close name is named with what it must be called, and not graded",
          "[submission][grader]") {
  TempDir d;
  d.write("Matmul_Tiled.cu");
  d.write("labs/02_naive_matmul/matmul_naive.cpp");
  d.write("notes.txt");
  const auto plan = plan_submission(d.path, labs());
  // Not used: the student must fix the name.
  const auto* tiled = plan.find("03_tiling");
  CHECK_FALSE(tiled->complete());
  CHECK(tiled->found.empty());
  REQUIRE(tiled->missing.size() == 1);
  CHECK_THAT(tiled->missing[0], Catch::Contains("missing matmul_tiled.cu") &&
                                    Catch::Contains("Matmul_Tiled.cu looks like it") &&
                                    Catch::Contains("rename it to matmul_tiled.cu"));
  CHECK(mentions(plan.ignored, "Matmul_Tiled.cu: not graded: did you mean labs/03_tiling/matmul_tiled.cu?"));
  CHECK(mentions(plan.ignored, "only in upper and lower case"));
  CHECK(mentions(plan.ignored,
                 "labs/02_naive_matmul/matmul_naive.cpp: not graded: did you mean "
                 "labs/02_naive_matmul/matmul_naive.cu?"));
  CHECK(mentions(plan.ignored, "has the extension .cpp where the lab's file has .cu"));
  CHECK(mentions(plan.ignored, "notes.txt: not a student file of any lab"));
  CHECK_FALSE(mentions(plan.ignored, "notes.txt: not graded"));
}

TEST_CASE("A close name beside the right file is listed, not offered as the lab's file",
          "[submission][grader]") {
  TempDir d;
  d.write("labs/03_tiling/matmul_tiled.cu");
  d.write("labs/03_tiling/matmul_tiled_old.cu");  // 4 edits: not close
  d.write("labs/03_tiling/matmul_tilde.cu");      // two letters swapped: 1 edit
  const auto plan = plan_submission(d.path, labs());
  CHECK(plan.find("03_tiling")->complete());
  CHECK(mentions(plan.ignored, "labs/03_tiling/matmul_tiled_old.cu: not a student file of any lab"));
  CHECK(mentions(plan.ignored,
                 "labs/03_tiling/matmul_tilde.cu: not a student file of any lab (its name is "
                 "close to 03_tiling's matmul_tiled.cu, which was graded from "
                 "labs/03_tiling/matmul_tiled.cu)"));
}

TEST_CASE("Close names: case, a source extension mixed up, or at most two edits", "[submission][grader]") {
  const std::vector<std::string> files = {"matmul_tiled.cu", "transpose.cu", "scan.cu"};
  const auto near = [&](const std::string& name) {
    const auto n = near_student_file(name, files);
    return n ? n->name : std::string();
  };
  CHECK(near("MATMUL_TILED.CU") == "matmul_tiled.cu");
  CHECK(near("matmul_tiled.cuh") == "matmul_tiled.cu");
  CHECK(near("transpose.cpp") == "transpose.cu");
  CHECK(near("transpos.cu") == "transpose.cu");
  CHECK(near("tarnspose.cu") == "transpose.cu");
  CHECK(near("matmul_tild.cu") == "matmul_tiled.cu");
  CHECK(near("transpose_final.cu").empty());  // 6 edits
  CHECK(near("transpose.txt").empty());       // not source: 3 edits
  CHECK(near("matmul_tiled.cu").empty());     // it is one
  CHECK(near("notes.txt").empty());
  CHECK(near("README.md").empty());
  CHECK(near("Scan.cu") == "scan.cu");  // short names: case only
  CHECK(near("scab.cu") == "scan.cu");  // 7 characters: edits too
}

TEST_CASE(
    "A part of the course graded as the whole of it says which labs count as missing and how to grade it",
    "[submission][grader]") {
  SubmissionPlan plan;
  for (const char* lab : {"01_coalescing", "02_naive_matmul", "03_tiling"})
    plan.labs.push_back({lab, {}, {}});
  plan.labs[2].found = {{"matmul_tiled.cu", "/s/matmul_tiled.cu"}};
  const std::vector<std::pair<std::string, std::vector<std::string>>> assignments = {
      {"hw1", {"01_coalescing", "02_naive_matmul"}}, {"hw3", {"03_tiling"}}};
  const std::string note = partial_submission_note(plan, assignments);
  CHECK_THAT(note, Catch::Contains("01_coalescing, 02_naive_matmul have none of their files here"));
  CHECK_THAT(note, Catch::Contains("for 03_tiling alone"));
  CHECK_THAT(note, Catch::Contains("--assignment hw3"));
  CHECK_THAT(note, !Catch::Contains("hw1"));
  // Without assignments in the course: how to define one.
  CHECK_THAT(partial_submission_note(plan, {}), Catch::Contains("[[assignment]]"));
  // No assignment that fits: every one is named.
  CHECK_THAT(partial_submission_note(plan, {{"hw1", {"01_coalescing"}}}),
             Catch::Contains("hw1 (01_coalescing)"));
  // Every lab handed in, or none: nothing to say.
  for (auto& l : plan.labs) l.found = {{"x.cu", "/s/x.cu"}};
  CHECK(partial_submission_note(plan, assignments).empty());
  for (auto& l : plan.labs) l.found.clear();
  CHECK(partial_submission_note(plan, assignments).empty());
}
