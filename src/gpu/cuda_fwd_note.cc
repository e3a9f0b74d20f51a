// See cuda_fwd_note.h. Our own reading of the layout NVIDIA's toolkit reads
// (cmd/nvidia-cdi-hook/cudacompat/cuda-elf-header.go): the section found by name through the
// section headers, the first note in it, the description's JSON.
#include "kernodeck/gpu/cuda_fwd_note.h"

#include <algorithm>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

using nlohmann::json;

namespace {

constexpr const char* kSection = ".note.cuda.fwd_compatibility";
constexpr uint32_t kShtNote = 7;
constexpr size_t kMaxNoteBytes = 64 * 1024;      // the real note is about 140 bytes
constexpr size_t kMaxStrtabBytes = 1024 * 1024;  // section names
constexpr size_t kMaxSections = 65535;
constexpr uint64_t kMaxSectionTableBytes = kMaxSections * 64;  // 4 MiB: never a 4 GiB read

// Reads integers of the file's width and byte order from a buffer; out of range reads give 0
// and set `bad`.
struct Decoder {
  bool little = true;
  mutable bool bad = false;

  uint64_t get(std::string_view b, size_t at, size_t width) const {
    if (at > b.size() || b.size() - at < width) {
      bad = true;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) {
      auto byte = static_cast<uint64_t>(static_cast<unsigned char>(b[at + (little ? width - 1 - i : i)]));
      v = (v << 8) | byte;
    }
    return v;
  }
};

std::string trimNul(std::string_view s) {
  size_t a = s.find_first_not_of('\0');
  if (a == std::string_view::npos) return "";
  size_t z = s.find_last_not_of('\0');
  return std::string(s.substr(a, z - a + 1));
}

Result<std::vector<int>> intList(const json& v, const char* key) {
  if (!v.is_array()) return Error::Invalid(std::string("the note's \"") + key + "\" is not a list");
  std::vector<int> out;
  for (const auto& x : v) {
    if (!x.is_number_integer()) return Error::Invalid(std::string("the note's \"") + key + "\" holds a non-integer");
    out.push_back(x.get<int>());
  }
  return out;
}

}  // namespace

json FwdCompatNote::toJson() const {
  return {{"format", format}, {"cuda", cudaVersion}, {"driver_branches", driverBranches}, {"devices", devices}};
}

Result<FwdCompatNote> parseFwdCompatDescription(std::string_view text) {
  KDK_TRY_STATUS(util::checkJsonNesting(text, "the note's description"));
  json j = util::parseUntrustedJson(text);
  if (!j.is_object()) return Error::Invalid("the note's description is not a JSON object");
  FwdCompatNote n;
  for (const auto& [key, v] : j.items()) {
    std::string k = util::toLower(key);
    if (k == "format") {
      if (!v.is_number_integer()) return Error::Invalid("the note's \"format\" is not an integer");
      n.format = v.get<int>();
    } else if (k == "cuda version") {
      if (!v.is_string()) return Error::Invalid("the note's \"CUDA version\" is not a string");
      n.cudaVersion = v.get<std::string>();
    } else if (k == "driver") {
      KDK_TRY_ASSIGN(n.driverBranches, intList(v, "driver"));
    } else if (k == "device") {
      KDK_TRY_ASSIGN(n.devices, intList(v, "device"));
    }
  }
  return n;
}

Result<std::optional<FwdCompatNote>> readFwdCompatNote(const ByteReader& read) {
  std::string eh = read(0, 64);
  if (eh.size() < 52 || eh.compare(0, 4,
                                   "\x7f"
                                   "ELF") != 0)
    return Error::Invalid("not an ELF file");
  bool is64 = eh[4] == 2;
  if ((eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2)) return Error::Invalid("an ELF file of unknown class");
  Decoder d{eh[5] == 1};
  if (is64 && eh.size() < 64) return Error::Invalid("a truncated ELF header");
  uint64_t shoff = is64 ? d.get(eh, 0x28, 8) : d.get(eh, 0x20, 4);
  size_t shentsize = d.get(eh, is64 ? 0x3A : 0x2E, 2), shnum = d.get(eh, is64 ? 0x3C : 0x30, 2);
  size_t shstrndx = d.get(eh, is64 ? 0x3E : 0x32, 2);
  size_t want = is64 ? 64 : 40;
  if (shoff == 0 || shnum == 0) return std::optional<FwdCompatNote>();  // no section headers: no note
  if (shentsize < want || shnum > kMaxSections || shstrndx >= shnum)
    return Error::Invalid("the ELF section headers are malformed");
  if (shentsize * shnum > kMaxSectionTableBytes) return Error::Invalid("the ELF section header table is too large");
  std::string sh = read(shoff, shentsize * shnum);
  if (sh.size() < shentsize * shnum) return Error::Invalid("the ELF section headers lie past the end of the file");
  struct Section {
    uint32_t name, type;
    uint64_t offset, size, align;
  };
  auto section = [&](size_t i) {
    size_t at = i * shentsize;
    return is64 ? Section{uint32_t(d.get(sh, at, 4)), uint32_t(d.get(sh, at + 4, 4)), d.get(sh, at + 24, 8),
                          d.get(sh, at + 32, 8), d.get(sh, at + 48, 8)}
                : Section{uint32_t(d.get(sh, at, 4)), uint32_t(d.get(sh, at + 4, 4)), d.get(sh, at + 16, 4),
                          d.get(sh, at + 20, 4), d.get(sh, at + 32, 4)};
  };
  Section strs = section(shstrndx);
  if (strs.size > kMaxStrtabBytes) return Error::Invalid("the ELF section name table is too large");
  const std::string_view wanted(kSection);
  for (size_t i = 0; i < shnum; ++i) {
    Section s = section(i);
    if (s.type != kShtNote || s.name >= strs.size) continue;
    // Only the bytes of this name, not the whole table: a name ends at its NUL or the table's end.
    std::string name = read(strs.offset + s.name, std::min<uint64_t>(strs.size - s.name, wanted.size() + 1));
    if (std::string_view(name.c_str()) != wanted) continue;
    if (s.size > kMaxNoteBytes) return Error::Invalid(std::string(kSection) + " is too large");
    std::string data = read(s.offset, s.size);
    if (data.size() < s.size) return Error::Invalid(std::string(kSection) + " lies past the end of the file");
    uint64_t namesz = d.get(data, 0, 4), descsz = d.get(data, 4, 4);
    if (d.bad) return Error::Invalid(std::string(kSection) + " is shorter than a note header");
    if (namesz == 0 || descsz == 0) return std::optional<FwdCompatNote>();
    uint64_t align = std::max<uint64_t>(s.align, 4);
    uint64_t nameEnd = 12 + ((namesz + align - 1) / align) * align;
    if (namesz > data.size() || nameEnd > data.size() || descsz > data.size() - nameEnd)
      return Error::Invalid(std::string(kSection) + ": the note's sizes exceed the section");
    if (trimNul(std::string_view(data).substr(12, namesz)) != "NVIDIA Corporation")
      return std::optional<FwdCompatNote>();  // as the toolkit: another vendor's note is no note
    auto n = parseFwdCompatDescription(trimNul(std::string_view(data).substr(nameEnd, descsz)));
    if (!n.ok()) return n.error();
    return std::optional<FwdCompatNote>(*n);
  }
  return std::optional<FwdCompatNote>();
}

std::string compatLibraryDriver(std::string_view name) {
  constexpr std::string_view prefix = "libcuda.so.";
  if (!name.starts_with(prefix)) return "";
  std::string v(name.substr(prefix.size()));
  auto parts = util::split(v, '.');
  if (parts.size() < 2 || parts.size() > 3) return "";
  for (const auto& p : parts)
    if (!util::parseUint(p)) return "";
  return v;
}

FwdCompatDecision fwdCompatApplies(const FwdCompatNote& note, std::string_view libraryDriver,
                                   std::string_view hostDriver, std::string_view hostCuda) {
  std::string lib(libraryDriver), host(hostDriver);
  if (!lib.empty() && !host.empty()) {
    auto branch = util::parseUint(util::split(host, '.')[0]);
    bool listed = branch && std::find(note.driverBranches.begin(), note.driverBranches.end(),
                                      static_cast<int>(*branch)) != note.driverBranches.end();
    std::string branches;
    for (int b : note.driverBranches) branches += (branches.empty() ? "" : ", ") + std::to_string(b);
    if (!listed)
      return {false, "the compat library " + lib + " (CUDA " + note.cudaVersion + ") lists driver branches " +
                         (branches.empty() ? "none" : branches) + ", not the host's " + util::split(host, '.')[0]};
    if (compareVersions(lib, host) <= 0)
      return {false, "the compat library " + lib + " is not newer than the host driver " + host};
    return {true, "the compat library " + lib + " (CUDA " + note.cudaVersion + ") supports the host's driver branch " +
                      util::split(host, '.')[0] + " and is newer than driver " + host};
  }
  if (!hostCuda.empty() && !note.cudaVersion.empty()) {
    if (compareVersions(note.cudaVersion, hostCuda) > 0)
      return {true,
              "the compat library's CUDA " + note.cudaVersion + " is newer than the host's " + std::string(hostCuda)};
    return {false,
            "the compat library's CUDA " + note.cudaVersion + " is not newer than the host's " + std::string(hostCuda)};
  }
  return {false, "neither the library's and the host's driver versions nor the host's CUDA version are known"};
}

}  // namespace kernodeck::gpu
