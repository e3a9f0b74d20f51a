// Pure parsers for the /proc and /sys files that describe GPUs.
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "kernodeck/gpu/gpu_models.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::host {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::optional<NvidiaDriver> parseNvidiaVersion(std::string_view text) {
  // Proprietary: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
  // Open:        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..."
  // Hand-scanned rather than a std::regex: the hook reads this at every container start.
  text = text.substr(0, 4096);
  size_t start = text.find("NVRM version:");
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(start);
  line = line.substr(0, line.find('\n'));
  constexpr std::string_view kModule = "Kernel Module";
  size_t at = line.find(kModule);
  if (at == std::string_view::npos) return std::nullopt;
  bool open = at >= 5 && line.substr(at - 5, 5) == "Open ";
  std::string_view rest = line.substr(at + kModule.size());
  auto skipSpaces = [&rest] {
    size_t n = 0;
    while (n < rest.size() && (rest[n] == ' ' || rest[n] == '\t')) ++n;
    rest.remove_prefix(n);
    return n;
  };
  if (skipSpaces() == 0) return std::nullopt;
  if (rest.substr(0, 4) == "for ") {  // "for x86_64"
    rest.remove_prefix(4);
    size_t n = 0;
    while (n < rest.size() && rest[n] != ' ' && rest[n] != '\t') ++n;
    rest.remove_prefix(n);
    if (skipSpaces() == 0) return std::nullopt;
  }
  size_t n = 0;
  int dots = 0;
  while (n < rest.size() && (isDigit(rest[n]) || (rest[n] == '.' && n > 0 && isDigit(rest[n - 1])))) {
    if (rest[n] == '.') ++dots;
    ++n;
  }
  std::string_view version = rest.substr(0, n);
  if (!version.empty() && version.back() == '.') return std::nullopt;
  if (dots < 1 || dots > 2) return std::nullopt;
  if (n < rest.size() && (isAlnum(rest[n]) || rest[n] == '_')) return std::nullopt;
  return NvidiaDriver{std::string(version), open};
}

std::optional<NvidiaGpu> parseGpuInformation(std::string_view text) {
  NvidiaGpu g;
  for (const auto& line : util::split(text.substr(0, 16384), '\n')) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(util::trim(std::string_view(line).substr(0, colon)));
    std::string value(util::trim(std::string_view(line).substr(colon + 1)));
    if (key == "Model")
      g.model = value;
    else if (key == "GPU UUID")
      g.uuid = value;
    else if (key == "Bus Location")
      g.busLocation = value;
    else if (key == "Bus Type")
      g.busType = value;
    else if (key == "Device Minor") {
      auto n = util::parseUint(value);
      if (n && *n < 256) g.minor = static_cast<int>(*n);
    } else if (key == "GPU Excluded")
      g.excluded = util::iequals(value, "yes");
  }
  if (g.model.empty() && g.uuid.empty()) return std::nullopt;
  auto [arch, brand] = inferArchAndBrand(g.model);
  g.arch = arch;
  g.brand = brand;
  return g;
}

std::map<std::string, int> parseProcDevices(std::string_view text) {
  std::map<std::string, int> out;
  bool chars = false;
  for (const auto& raw : util::split(text.substr(0, 65536), '\n')) {
    std::string_view line = util::trim(raw);
    if (line == "Character devices:") {
      chars = true;
      continue;
    }
    if (line == "Block devices:") {
      chars = false;
      continue;
    }
    if (!chars || line.empty()) continue;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    auto major = util::parseUint(line.substr(0, sp));
    std::string name(util::trim(line.substr(sp + 1)));
    if (major && *major < 4096 && !name.empty() && !out.count(name)) out[name] = static_cast<int>(*major);
  }
  return out;
}

std::vector<MigDevice> parseMigMinors(std::string_view text) {
  // Lines: "config 1", "monitor 2", "gpu0/gi0/access 3", "gpu0/gi0/ci0/access 4". The driver
  // writes every possible capability (4,320 lines for 32 GPUs), so this runs without std::regex.
  std::vector<MigDevice> out;
  // Numbers beyond the device-number range are not MIG minors (and must not overflow).
  auto number = [](std::string_view& s, std::string_view prefix) -> int {
    if (s.substr(0, prefix.size()) != prefix) return -1;
    s.remove_prefix(prefix.size());
    size_t n = 0;
    while (n < s.size() && isDigit(s[n])) ++n;
    auto v = util::parseUint(s.substr(0, n));
    s.remove_prefix(n);
    return v && *v < (1u << 20) ? static_cast<int>(*v) : -1;
  };
  for (std::string_view line : util::split(text.substr(0, 1 << 20), '\n')) {
    line = util::trim(line);
    MigDevice d{number(line, "gpu"), -1, -1, -1};
    if (d.gpu < 0 || (d.gi = number(line, "/gi")) < 0) continue;
    if (line.substr(0, 3) == "/ci" && (d.ci = number(line, "/ci")) < 0) continue;
    if ((d.minor = number(line, "/access ")) < 0 || !line.empty()) continue;
    out.push_back(d);
  }
  return out;
}

std::map<std::string, uint64_t> parseKfdProperties(std::string_view text) {
  std::map<std::string, uint64_t> out;
  for (const auto& raw : util::split(text.substr(0, 65536), '\n')) {
    std::string_view line = util::trim(raw);
    size_t sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    auto v = util::parseUint(line.substr(sp + 1));
    if (v) out[std::string(util::trim(line.substr(0, sp)))] = *v;
  }
  return out;
}

std::string gfxName(uint64_t v) {
  if (v == 0) return {};
  unsigned major = static_cast<unsigned>(v / 10000), minor = static_cast<unsigned>((v / 100) % 100),
           step = static_cast<unsigned>(v % 100);
  char buf[32];
  std::snprintf(buf, sizeof buf, "gfx%u%x%x", major, minor, step);
  return buf;
}

std::pair<std::string, std::string> inferArchAndBrand(std::string_view modelRaw) {
  // The model table is gpu::capabilityForModel's (gpu/gpu_models.cc: Volta to Blackwell).
  std::string model = util::toLower(modelRaw);
  std::string arch = gpu::capabilityForModel(modelRaw);
  std::string brand = gpu::brandForModel(modelRaw);
  if (!arch.empty() && model.find("tesla") != std::string::npos) brand = "tesla";
  if (!brand.empty()) return {arch, brand};
  if (model.find("geforce") != std::string::npos) return {arch, "geforce"};
  if (model.find("quadro") != std::string::npos) return {arch, "quadro"};
  if (model.find("tesla") != std::string::npos) return {arch, "tesla"};
  return {arch, ""};
}

std::string archForPciDevice(uint32_t device) {
  // The table is gpu::gpuForPciDevice's (gpu/gpu_models.cc: NVIDIA's open-gpu-kernel-modules list
  // and pci.ids), read for the models a driver older than the GPU shows as "NVIDIA Graphics Device".
  return gpu::gpuForPciDevice(device).capability;
}

std::optional<PciAddress> parsePciAddress(std::string_view s) {
  auto hex = [&s](size_t minDigits, size_t maxDigits, char stop, uint32_t& out) {
    size_t n = 0;
    uint32_t v = 0;
    while (n < s.size() && n < maxDigits && std::isxdigit(static_cast<unsigned char>(s[n]))) {
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[n])));
      v = v * 16 + static_cast<uint32_t>(isDigit(c) ? c - '0' : c - 'a' + 10);
      ++n;
    }
    if (n < minDigits) return false;
    s.remove_prefix(n);
    if (stop) {
      if (s.empty() || s[0] != stop) return false;
      s.remove_prefix(1);
    }
    out = v;
    return true;
  };
  PciAddress a;
  uint32_t bus = 0, dev = 0, fn = 0;
  if (!hex(4, 8, ':', a.domain) || !hex(2, 2, ':', bus) || !hex(2, 2, '.', dev) || !hex(1, 1, 0, fn) || !s.empty())
    return std::nullopt;
  if (dev > 0x1f || fn > 7) return std::nullopt;
  a.bus = bus;
  a.device = dev;
  a.function = fn;
  return a;
}

std::optional<std::string> parseTegraRelease(std::string_view text) {
  // "# R36 (release), REVISION: 3.0, GCID: 36923193, BOARD: generic, EABI: aarch64, DATE: ..."
  std::string_view line = text.substr(0, text.find('\n'));
  size_t r = line.find("# R");
  if (r != 0) return std::nullopt;
  size_t n = 3;
  while (n < line.size() && isDigit(line[n])) ++n;
  if (n == 3) return std::nullopt;
  std::string release(line.substr(2, n - 2));
  constexpr std::string_view kRevision = "REVISION: ";
  if (size_t at = line.find(kRevision); at != std::string_view::npos) {
    std::string_view rest = line.substr(at + kRevision.size());
    size_t m = 0;
    while (m < rest.size() && (isDigit(rest[m]) || rest[m] == '.')) ++m;
    if (m > 0) release += "." + std::string(rest.substr(0, m));
  }
  return release;
}

}  // namespace kernodeck::host
