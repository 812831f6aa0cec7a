// cudalab/elf.h: the one reader of ELF64 files (little-endian, as x86-64
// writes them) for the framework: the grader's policy reads a submission's
// objects, the replay reads a test binary's device code, the sandbox reads a
// program's interpreter.
//
// Header-only and standard C++ alone (no fmt, no harness library), so that
// the sandbox launcher, a small program linked on its own, can use it too.
//
// The bytes are untrusted (a submission's object): every read is checked
// against the file's size, and structures are copied out with memcpy rather
// than cast in place, so an odd offset is no misaligned access. What does not
// fit reads as missing (an empty name, no contents), never past the end.
#pragma once

#include <elf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace cudalab::elf {

class File {
 public:
  // Reads the header and the section table of `bytes`, which must outlive
  // the File. is_elf64() and has_section_table() say how far it got.
  explicit File(std::string_view bytes) : bytes_(bytes) {
    if (!read(0, header_) || std::memcmp(header_.e_ident, ELFMAG, SELFMAG) != 0 ||
        header_.e_ident[EI_CLASS] != ELFCLASS64 || header_.e_ident[EI_DATA] != ELFDATA2LSB)
      return;
    elf64_ = true;
    if (header_.e_shoff == 0 || header_.e_shentsize != sizeof(Elf64_Shdr)) return;
    // Many sections: the count (and the string table's index) are in section 0.
    Elf64_Shdr first{};
    if (!read(header_.e_shoff, first)) return;
    std::uint64_t count = header_.e_shnum != 0 ? header_.e_shnum : first.sh_size;
    if (count == 0 || !fits(header_.e_shoff, count, sizeof(Elf64_Shdr))) return;
    section_count_ = static_cast<std::size_t>(count);
    names_ = header_.e_shstrndx == SHN_XINDEX ? first.sh_link : header_.e_shstrndx;
  }

  // A 64-bit little-endian ELF file: nothing else is read.
  bool is_elf64() const { return elf64_; }
  const Elf64_Ehdr& header() const { return header_; }
  std::string_view bytes() const { return bytes_; }

  // --- sections

  // The section table lies within the file, entries of the size this reader knows.
  bool has_section_table() const { return section_count_ > 0; }
  std::size_t section_count() const { return section_count_; }
  // Section i (i < section_count()); a zeroed header for any other i.
  Elf64_Shdr section(std::size_t i) const {
    Elf64_Shdr sh{};
    if (i < section_count_) read(header_.e_shoff + std::uint64_t(i) * sizeof sh, sh);
    return sh;
  }
  // The section names' string table is a section whose bytes are in the file.
  bool has_section_names() const { return names_ < section_count_ && contents(names_).has_value(); }
  std::string_view section_name(std::size_t i) const { return string(names_, section(i).sh_name); }
  // The first section called `name`.
  std::optional<std::size_t> section_named(std::string_view name) const {
    for (std::size_t i = 0; i < section_count_; ++i)
      if (section_name(i) == name) return i;
    return std::nullopt;
  }
  // Section i's bytes; none for a section without any in the file (SHT_NOBITS)
  // or one that would reach past its end.
  std::optional<std::string_view> contents(std::size_t i) const {
    if (i >= section_count_) return std::nullopt;
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type == SHT_NOBITS || !fits(sh.sh_offset, sh.sh_size, 1)) return std::nullopt;
    return bytes_.substr(sh.sh_offset, sh.sh_size);
  }
  // The NUL-terminated string at `offset` of string table `strtab`, cut at
  // the table's end; empty where the table or the offset is not readable.
  std::string_view string(std::size_t strtab, std::uint64_t offset) const {
    const auto table = contents(strtab);
    if (!table || offset >= table->size()) return {};
    const std::string_view rest = table->substr(offset);
    return rest.substr(0, std::min(rest.find('\0'), rest.size()));
  }

  // --- symbols (the static symbol table, SHT_SYMTAB)

  struct Symbols {
    std::size_t section = 0;  // the table's section
    std::size_t strtab = 0;   // the section of its names
    std::size_t count = 0;    // 0: no readable symbol table
  };
  Symbols symbols() const {
    for (std::size_t i = 0; i < section_count_; ++i) {
      const Elf64_Shdr sh = section(i);
      if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
      if (!fits(sh.sh_offset, sh.sh_size / sizeof(Elf64_Sym), sizeof(Elf64_Sym))) continue;
      return {i, sh.sh_link, static_cast<std::size_t>(sh.sh_size / sizeof(Elf64_Sym))};
    }
    return {};
  }
  // Symbol k of `table` (k < table.count).
  Elf64_Sym symbol(const Symbols& table, std::size_t k) const {
    Elf64_Sym s{};
    if (k < table.count) read(section(table.section).sh_offset + std::uint64_t(k) * sizeof s, s);
    return s;
  }
  std::string_view symbol_name(const Symbols& table, const Elf64_Sym& s) const {
    return string(table.strtab, s.st_name);
  }

  // --- relocations

  // The relocations with addend (SHT_RELA) that apply to section `target`;
  // none at all where one of their tables reaches past the file's end (a
  // caller that compares code must not take a part for the whole).
  std::optional<std::vector<Elf64_Rela>> relocations(std::size_t target) const {
    std::vector<Elf64_Rela> out;
    for (std::size_t i = 0; i < section_count_; ++i) {
      const Elf64_Shdr rs = section(i);
      if (rs.sh_type != SHT_RELA || rs.sh_info != target || rs.sh_entsize != sizeof(Elf64_Rela)) continue;
      const std::uint64_t n = rs.sh_size / sizeof(Elf64_Rela);
      if (!fits(rs.sh_offset, n, sizeof(Elf64_Rela))) return std::nullopt;
      for (std::uint64_t k = 0; k < n; ++k) {
        Elf64_Rela r{};
        read(rs.sh_offset + k * sizeof r, r);
        out.push_back(r);
      }
    }
    return out;
  }

  // --- program headers (an executable's or a shared library's)

  std::size_t program_header_count() const {
    if (!elf64_ || header_.e_phoff == 0 || header_.e_phentsize != sizeof(Elf64_Phdr) ||
        !fits(header_.e_phoff, header_.e_phnum, sizeof(Elf64_Phdr)))
      return 0;
    return header_.e_phnum;
  }
  Elf64_Phdr program_header(std::size_t i) const {
    Elf64_Phdr ph{};
    if (i < program_header_count()) read(header_.e_phoff + std::uint64_t(i) * sizeof ph, ph);
    return ph;
  }
  // The program interpreter (PT_INTERP: the dynamic loader), up to its NUL;
  // empty where there is none or it is not in the file.
  std::string_view interpreter() const {
    for (std::size_t i = 0; i < program_header_count(); ++i) {
      const Elf64_Phdr ph = program_header(i);
      if (ph.p_type != PT_INTERP) continue;
      if (ph.p_filesz == 0 || !fits(ph.p_offset, ph.p_filesz, 1)) return {};
      const std::string_view s = bytes_.substr(ph.p_offset, ph.p_filesz);
      return s.substr(0, std::min(s.find('\0'), s.size()));
    }
    return {};
  }

 private:
  // `count` items of `size` bytes from `offset` lie within the file (no overflow).
  bool fits(std::uint64_t offset, std::uint64_t count, std::uint64_t size) const {
    return offset <= bytes_.size() && count <= (bytes_.size() - offset) / size;
  }
  template <class T>
  bool read(std::uint64_t offset, T& out) const {
    if (!fits(offset, 1, sizeof(T))) return false;
    std::memcpy(&out, bytes_.data() + offset, sizeof(T));
    return true;
  }

  std::string_view bytes_;
  Elf64_Ehdr header_{};
  bool elf64_ = false;
  std::size_t section_count_ = 0;
  std::size_t names_ = 0;
};

}  // namespace cudalab::elf
