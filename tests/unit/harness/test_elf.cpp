// The ELF64 reader (cudalab/elf.h) on real files, and on the broken ones a
// submission can hand the grader: cut short, not ELF, 32-bit, tables that
// point past the end of the file.
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cudalab/catch.h"
#include "cudalab/elf.h"
#include "run/process.h"

using namespace cudalab;

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small object compiled by the test: a global function that calls an
// external one (a relocation against .text) and a string.
const std::string& compiled_object() {
  static const std::string bytes = [] {
    const fs::path dir = fs::temp_directory_path() / ("cudalab-elf-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path src = dir / "probe.cpp", obj = dir / "probe.o";
    std::ofstream(src)
        << "extern \"C\" int cudalab_elf_external(const char*);\n"
           "extern \"C\" int cudalab_elf_probe() { return cudalab_elf_external(\"hello\"); }\n";
    ProcessOptions opt;
    opt.argv = {"c++", "-O2", "-c", src.string(), "-o", obj.string()};
    opt.timeout_s = 120;
    const ProcessResult p = run_process(opt);
    std::string out = p.ok() ? read_file(obj) : std::string();
    fs::remove_all(dir);
    return out;
  }();
  return bytes;
}

const std::string& self_exe() {
  static const std::string bytes = read_file("/proc/self/exe");
  return bytes;
}

template <class T>
void poke(std::string& bytes, std::uint64_t offset, const T& value) {
  REQUIRE(offset + sizeof(T) <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

Elf64_Ehdr header_of(const std::string& bytes) {
  Elf64_Ehdr eh{};
  REQUIRE(bytes.size() >= sizeof eh);
  std::memcpy(&eh, bytes.data(), sizeof eh);
  return eh;
}

}  // namespace

TEST_CASE("A compiled object's sections, symbols and relocations are read", "[elf][harness]") {
  const std::string& object = compiled_object();
  REQUIRE_FALSE(object.empty());
  const elf::File f(object);
  REQUIRE(f.is_elf64());
  REQUIRE(f.has_section_table());
  REQUIRE(f.has_section_names());
  const auto text = f.section_named(".text");
  REQUIRE(text);
  CHECK(f.section_name(*text) == ".text");
  REQUIRE(f.contents(*text));
  CHECK_FALSE(f.contents(*text)->empty());
  CHECK_FALSE(f.section_named(".no_such_section"));

  const auto symbols = f.symbols();
  REQUIRE(symbols.count > 0);
  bool probe = false;
  for (std::size_t i = 0; i < symbols.count; ++i) {
    const Elf64_Sym s = f.symbol(symbols, i);
    if (f.symbol_name(symbols, s) != "cudalab_elf_probe") continue;
    probe = true;
    CHECK(ELF64_ST_TYPE(s.st_info) == STT_FUNC);
    CHECK(ELF64_ST_BIND(s.st_info) == STB_GLOBAL);
    CHECK(s.st_shndx == *text);
  }
  CHECK(probe);

  // The call to the external function is a relocation of .text naming it.
  const auto relocations = f.relocations(*text);
  REQUIRE(relocations);
  bool external = false;
  for (const Elf64_Rela& r : *relocations)
    external |= f.symbol_name(symbols, f.symbol(symbols, ELF64_R_SYM(r.r_info))) == "cudalab_elf_external";
  CHECK(external);
  // A relocatable object has no program headers, so no interpreter.
  CHECK(f.program_header_count() == 0);
  CHECK(f.interpreter().empty());
}

TEST_CASE("An executable's interpreter is its PT_INTERP, the dynamic loader", "[elf][harness]") {
  const elf::File f(self_exe());
  REQUIRE(f.is_elf64());
  CHECK(f.program_header_count() > 0);
  const std::string interp(f.interpreter());
  CAPTURE(interp);
  CHECK(interp.rfind("/", 0) == 0);
  CHECK(interp.find("ld-linux") != std::string::npos);
  CHECK(fs::exists(interp));
}

TEST_CASE("What is not a 64-bit little-endian ELF file is refused before anything is read",
          "[elf][harness]") {
  CHECK_FALSE(elf::File("").is_elf64());
  CHECK_FALSE(elf::File("not an object at all").is_elf64());
  CHECK_FALSE(elf::File(self_exe().substr(0, 10)).is_elf64());  // shorter than the header

  std::string elf32 = self_exe().substr(0, 4096);
  elf32[EI_CLASS] = ELFCLASS32;
  CHECK_FALSE(elf::File(elf32).is_elf64());
  std::string big_endian = self_exe().substr(0, 4096);
  big_endian[EI_DATA] = ELFDATA2MSB;
  CHECK_FALSE(elf::File(big_endian).is_elf64());

  const elf::File refused("not an object at all, but long enough to hold an ELF header's sixty-four bytes");
  CHECK(refused.section_count() == 0);
  CHECK(refused.symbols().count == 0);
  CHECK(refused.program_header_count() == 0);
  CHECK(refused.interpreter().empty());
}

TEST_CASE("A file cut short keeps its header but loses the tables beyond the cut", "[elf][harness]") {
  const std::string& object = compiled_object();
  REQUIRE_FALSE(object.empty());
  const Elf64_Ehdr eh = header_of(object);
  // Objects put the section table last: cutting inside it loses all of it.
  for (const std::uint64_t cut :
       {std::uint64_t(sizeof(Elf64_Ehdr)), std::uint64_t(eh.e_shoff), std::uint64_t(object.size() - 1)}) {
    CAPTURE(cut);
    const std::string part = object.substr(0, cut);
    const elf::File f(part);
    CHECK(f.is_elf64());
    CHECK_FALSE(f.has_section_table());
    CHECK(f.section_count() == 0);
    CHECK_FALSE(f.section_named(".text"));
    CHECK_FALSE(f.contents(1));
    CHECK(f.symbols().count == 0);
  }
  // An executable cut after its program headers but before the interpreter's bytes.
  const Elf64_Ehdr exe = header_of(self_exe());
  const std::string head = self_exe().substr(0, exe.e_phoff + exe.e_phnum * sizeof(Elf64_Phdr));
  const elf::File f(head);
  CHECK(f.program_header_count() == exe.e_phnum);
  bool interp_beyond = false;
  for (std::size_t i = 0; i < f.program_header_count(); ++i)
    if (f.program_header(i).p_type == PT_INTERP) interp_beyond = f.program_header(i).p_offset >= head.size();
  if (interp_beyond) CHECK(f.interpreter().empty());
}

TEST_CASE("A section table or a section that points past the end of the file is not read", "[elf][harness]") {
  const std::string& object = compiled_object();
  REQUIRE_FALSE(object.empty());
  const Elf64_Ehdr eh = header_of(object);

  SECTION("the table's offset past the end, or so large that offset plus size overflows") {
    for (const std::uint64_t offset : {std::uint64_t(object.size()), ~std::uint64_t(0) - 63}) {
      std::string bad = object;
      poke(bad, offsetof(Elf64_Ehdr, e_shoff), offset);
      const elf::File f(bad);
      CHECK(f.is_elf64());
      CHECK_FALSE(f.has_section_table());
    }
  }
  SECTION("more sections than the file holds") {
    std::string bad = object;
    poke(bad, offsetof(Elf64_Ehdr, e_shnum), std::uint16_t(0xfeff));
    CHECK_FALSE(elf::File(bad).has_section_table());
  }
  SECTION("entries of another size than Elf64_Shdr") {
    std::string bad = object;
    poke(bad, offsetof(Elf64_Ehdr, e_shentsize), std::uint16_t(sizeof(Elf64_Shdr) / 2));
    CHECK_FALSE(elf::File(bad).has_section_table());
  }
  SECTION("a section's bytes, the section names and a relocation table past the end") {
    const elf::File good(object);
    const auto text = good.section_named(".text");
    REQUIRE(text);
    std::string bad = object;
    const std::uint64_t text_header = eh.e_shoff + *text * sizeof(Elf64_Shdr);
    poke(bad, text_header + offsetof(Elf64_Shdr, sh_offset), std::uint64_t(object.size() - 8));
    {
      const elf::File f(bad);
      CHECK(f.has_section_table());
      CHECK_FALSE(f.contents(*text));
    }
    // The relocations of .text: their table reaching past the end is none, not a part.
    std::size_t rela = 0;
    for (std::size_t i = 0; i < good.section_count(); ++i)
      if (good.section(i).sh_type == SHT_RELA && good.section(i).sh_info == *text) rela = i;
    REQUIRE(rela != 0);
    bad = object;
    poke(bad, eh.e_shoff + rela * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_size),
         std::uint64_t(object.size()));
    CHECK_FALSE(elf::File(bad).relocations(*text));
    // The names' table past the end: every name reads empty.
    bad = object;
    poke(bad, eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_offset),
         ~std::uint64_t(0) - 1);
    const elf::File f(bad);
    CHECK_FALSE(f.has_section_names());
    CHECK(f.section_name(*text).empty());
    CHECK_FALSE(f.section_named(".text"));
  }
  SECTION("a name's offset beyond its string table") {
    const elf::File good(object);
    const auto text = good.section_named(".text");
    REQUIRE(text);
    std::string bad = object;
    poke(bad, eh.e_shoff + *text * sizeof(Elf64_Shdr) + offsetof(Elf64_Shdr, sh_name),
         std::uint32_t(0xfffffff0));
    CHECK(elf::File(bad).section_name(*text).empty());
  }
}

TEST_CASE("Many sections: the count and the names' index are read from section 0", "[elf][harness]") {
  const std::string& object = compiled_object();
  REQUIRE_FALSE(object.empty());
  const Elf64_Ehdr eh = header_of(object);
  std::string extended = object;
  poke(extended, offsetof(Elf64_Ehdr, e_shnum), std::uint16_t(0));
  poke(extended, offsetof(Elf64_Ehdr, e_shstrndx), std::uint16_t(SHN_XINDEX));
  poke(extended, eh.e_shoff + offsetof(Elf64_Shdr, sh_size), std::uint64_t(eh.e_shnum));
  poke(extended, eh.e_shoff + offsetof(Elf64_Shdr, sh_link), std::uint32_t(eh.e_shstrndx));
  const elf::File f(extended);
  CHECK(f.section_count() == eh.e_shnum);
  CHECK(f.section_named(".text"));
}

TEST_CASE("A file at an odd address is read the same (structures are copied, not cast)", "[elf][harness]") {
  const std::string& object = compiled_object();
  REQUIRE_FALSE(object.empty());
  const std::string shifted = "x" + object;
  const elf::File f(std::string_view(shifted).substr(1));
  REQUIRE(f.has_section_table());
  const auto text = f.section_named(".text");
  REQUIRE(text);
  CHECK(*f.contents(*text) == *elf::File(object).contents(*text));
}
