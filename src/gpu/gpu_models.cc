// NVIDIA GPU models, PCI device ids and compute capabilities.
//
// Where the rows come from (public sources):
// - PCI device ids: NVIDIA's open-gpu-kernel-modules README, "Compatible GPUs" (driver
//   595.45.04: product name and device id of every GPU from Turing on), and for Volta and the ids
//   it leaves out the PCI ID Repository's pci.ids (pciutils/pciids, 2026-08; Debian's `pci.ids`
//   package ships an older copy at /usr/share/misc/pci.ids).
// - Compute capabilities: NVIDIA's "CUDA GPUs" list (developer.nvidia.com/cuda-gpus) and the CUDA
//   C++ Programming Guide's table of compute capabilities (B300/GB300: 10.3; Jetson Thor: 11.0,
//   10.1 before CUDA 13; RTX 50 and RTX PRO Blackwell: 12.0; GB10: 12.1).
#include "kernodeck/gpu/gpu_models.h"

#include <algorithm>

#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

namespace {

// The words of a model name: lower case, split at spaces, '-', '_', '/' and '(' ')'.
std::vector<std::string> words(std::string_view model) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : model) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '.') {
      cur += static_cast<char>(std::tolower(u));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// A word of a row against a word of the name: '#' is one digit, a final '*' any rest.
bool wordMatches(std::string_view pattern, std::string_view word) {
  size_t i = 0;
  for (; i < pattern.size(); ++i) {
    if (pattern[i] == '*' && i + 1 == pattern.size()) return true;
    if (i >= word.size()) return false;
    if (pattern[i] == '#' ? !std::isdigit(static_cast<unsigned char>(word[i])) : pattern[i] != word[i]) return false;
  }
  return i == word.size();
}

struct ModelRow {
  std::vector<const char*> words;  // all of them somewhere in the name
  const char* capability;
  const char* brand;  // as host::inferArchAndBrand has always said it; empty where not known
};

// First match wins: the narrow rows (RTX PRO, Ada workstation, Quadro RTX) before the wide ones.
const std::vector<ModelRow>& modelRows() {
  static const std::vector<ModelRow> rows = {
      // Blackwell
      {{"gb300*"}, "10.3", "nvidia"},
      {{"b300*"}, "10.3", "nvidia"},
      {{"gb200*"}, "10.0", "nvidia"},
      {{"b200*"}, "10.0", "nvidia"},
      {{"b100*"}, "10.0", "nvidia"},
      {{"gb10"}, "12.1", "nvidia"},
      {{"spark"}, "12.1", "nvidia"},  // DGX Spark: GB10
      {{"thor"}, "11.0", ""},         // Jetson Thor
      {{"rtx", "pro"}, "12.0", ""},   // RTX PRO 6000/5000/4500/4000/2000 Blackwell
      {{"rtx", "6000d"}, "12.0", ""},
      {{"rtx", "5090*"}, "12.0", "geforce"},
      {{"rtx", "5080*"}, "12.0", "geforce"},
      {{"rtx", "5070*"}, "12.0", "geforce"},
      {{"rtx", "5060*"}, "12.0", "geforce"},
      {{"rtx", "5050*"}, "12.0", "geforce"},
      // Hopper
      {{"gh200*"}, "9.0", "nvidia"},
      {{"h200*"}, "9.0", "nvidia"},
      {{"h100*"}, "9.0", "nvidia"},
      {{"h800*"}, "9.0", "nvidia"},
      {{"h20*"}, "9.0", "nvidia"},
      // Ada
      {{"rtx", "ada"}, "8.9", ""},  // RTX 6000/5880/5000/4500/4000/3500/2000 Ada Generation
      {{"l40*"}, "8.9", "nvidia"},
      {{"l4"}, "8.9", "nvidia"},
      {{"l20"}, "8.9", "nvidia"},
      {{"l2"}, "8.9", "nvidia"},
      {{"l16"}, "8.9", "nvidia"},
      {{"l30"}, "8.9", "nvidia"},
      {{"rtx", "4090*"}, "8.9", "geforce"},
      {{"rtx", "4080*"}, "8.9", "geforce"},
      {{"rtx", "4070*"}, "8.9", "geforce"},
      {{"rtx", "4060*"}, "8.9", "geforce"},
      {{"rtx", "4050*"}, "8.9", "geforce"},
      // Ampere
      {{"rtx", "a#*"}, "8.6", ""},  // RTX A6000/A5500/A5000/A4500/A4000/A3000/A2000/A1000/A400
      {{"a100*"}, "8.0", "nvidia"},
      {{"a800*"}, "8.0", "nvidia"},
      {{"ax800"}, "8.0", "nvidia"},
      {{"a30*"}, "8.0", "nvidia"},
      {{"orin"}, "8.7", ""},
      {{"a40"}, "8.6", "nvidia"},
      {{"a10*"}, "8.6", "nvidia"},  // A10, A10G, A10M
      {{"a16"}, "8.6", "nvidia"},
      {{"a2"}, "8.6", "nvidia"},
      {{"rtx", "3090*"}, "8.6", "geforce"},
      {{"rtx", "3080*"}, "8.6", "geforce"},
      {{"rtx", "3070*"}, "8.6", "geforce"},
      {{"rtx", "3060*"}, "8.6", "geforce"},
      {{"rtx", "3050*"}, "8.6", "geforce"},
      // Turing
      {{"quadro", "rtx"}, "7.5", "quadro"},
      {{"titan", "rtx"}, "7.5", ""},
      {{"rtx", "8000"}, "7.5", "quadro"},  // Quadro RTX 8000
      {{"t4*"}, "7.5", "tesla"},           // T4, T4G, T40
      {{"t10"}, "7.5", "tesla"},
      {{"t#00*"}, "7.5", ""},  // T400, T500, T600
      {{"t#000*"}, "7.5", ""},  // T1000, T2000
      {{"rtx", "2080*"}, "7.5", "geforce"},
      {{"rtx", "2070*"}, "7.5", "geforce"},
      {{"rtx", "2060*"}, "7.5", "geforce"},
      {{"gtx", "1660*"}, "7.5", "geforce"},
      {{"gtx", "1650*"}, "7.5", "geforce"},
      // Volta
      {{"v100*"}, "7.0", "tesla"},
      {{"gv100*"}, "7.0", ""},
      {{"titan", "v"}, "7.0", ""},
      {{"xavier"}, "7.2", ""},
      // Older, as the host table has always known them
      {{"p100*"}, "6.0", "tesla"},
      {{"p40"}, "6.1", "tesla"},
      {{"p4"}, "6.1", "tesla"},
      {{"k80"}, "3.7", "tesla"},
  };
  return rows;
}

const ModelRow* modelRow(std::string_view model) {
  std::vector<std::string> w = words(model);
  for (const auto& row : modelRows()) {
    bool all = std::all_of(row.words.begin(), row.words.end(), [&](const char* p) {
      return std::any_of(w.begin(), w.end(), [&](const std::string& x) { return wordMatches(p, x); });
    });
    if (all) return &row;
  }
  return nullptr;
}

struct PciRow {
  uint32_t device;
  const char* capability;
  const char* model;
};

// Sorted by device id.
constexpr PciRow kPciRows[] = {
    // Volta (pci.ids)
    {0x1d81, "7.0", "TITAN V"},
    {0x1db0, "7.0", "Tesla GV100 SXM2"},
    {0x1db1, "7.0", "Tesla V100 SXM2 16GB"},
    {0x1db2, "7.0", "Tesla V100 DGXS 16GB"},
    {0x1db3, "7.0", "Tesla V100 FHHL 16GB"},
    {0x1db4, "7.0", "Tesla V100 PCIe 16GB"},
    {0x1db5, "7.0", "Tesla V100 SXM2 32GB"},
    {0x1db6, "7.0", "Tesla V100 PCIe 32GB"},
    {0x1db7, "7.0", "Tesla V100 DGXS 32GB"},
    {0x1db8, "7.0", "Tesla V100 SXM3 32GB"},
    {0x1dba, "7.0", "Quadro GV100"},
    {0x1dbd, "7.0", "Tesla GV100 DGX1-V"},
    {0x1df5, "7.0", "Tesla V100 SXM2 16GB"},
    {0x1df6, "7.0", "Tesla V100S PCIe 32GB"},
    // Turing
    {0x1e02, "7.5", "TITAN RTX"},
    {0x1e30, "7.5", "Quadro RTX 6000/8000"},
    {0x1e36, "7.5", "Quadro RTX 6000"},
    {0x1e37, "7.5", "Tesla T10"},
    {0x1e38, "7.5", "Tesla T40"},
    {0x1e78, "7.5", "Quadro RTX 6000/8000"},
    {0x1eb0, "7.5", "Quadro RTX 5000"},
    {0x1eb1, "7.5", "Quadro RTX 4000"},
    {0x1eb4, "7.5", "T4G"},
    {0x1eb8, "7.5", "Tesla T4"},
    {0x1fb0, "7.5", "T1000"},
    {0x1fb1, "7.5", "T600"},
    {0x1fb2, "7.5", "T400"},
    {0x1ff0, "7.5", "T1000 8GB"},
    {0x1ff2, "7.5", "T400 4GB"},
    // Ampere GA100
    {0x20b0, "8.0", "A100-SXM4-40GB"},
    {0x20b1, "8.0", "A100 PCIe 40GB"},
    {0x20b2, "8.0", "A100-SXM4-80GB"},
    {0x20b3, "8.0", "A100-SXM-64GB"},
    {0x20b5, "8.0", "A100 80GB PCIe"},
    {0x20b6, "8.0", "PG506-232"},
    {0x20b7, "8.0", "A30"},
    {0x20b8, "8.0", "A100X"},
    {0x20b9, "8.0", "A30X"},
    {0x20bd, "8.0", "A800-SXM4-40GB"},
    {0x20f1, "8.0", "A100-PCIE-40GB"},
    {0x20f3, "8.0", "A800-SXM4-80GB"},
    {0x20f5, "8.0", "A800 80GB PCIe"},
    {0x20f6, "8.0", "A800 40GB Active"},
    {0x20fd, "8.0", "AX800"},
    // Ampere GA10x
    {0x2230, "8.6", "RTX A6000"},
    {0x2231, "8.6", "RTX A5000"},
    {0x2232, "8.6", "RTX A4500"},
    {0x2233, "8.6", "RTX A5500"},
    {0x2235, "8.6", "A40"},
    {0x2236, "8.6", "A10"},
    {0x2237, "8.6", "A10G"},
    {0x2238, "8.6", "A10M"},
    // Hopper
    {0x230c, "9.0", "H20 NVL16"},
    {0x230e, "9.0", "H20 NVL16"},
    {0x2321, "9.0", "H100 NVL"},
    {0x2322, "9.0", "H800 PCIe"},
    {0x2324, "9.0", "H800"},
    {0x2329, "9.0", "H20"},
    {0x232c, "9.0", "H20-3e"},
    {0x2330, "9.0", "H100 80GB HBM3"},
    {0x2331, "9.0", "H100 PCIe"},
    {0x2335, "9.0", "H200"},
    {0x2336, "9.0", "H100"},
    {0x2337, "9.0", "H100 SXM5 64GB"},
    {0x2338, "9.0", "H100 SXM5 96GB"},
    {0x2339, "9.0", "H100"},
    {0x233a, "9.0", "H800 NVL"},
    {0x233b, "9.0", "H200 NVL"},
    {0x233d, "9.0", "H100 96GB"},
    {0x2342, "9.0", "GH200 120GB"},
    {0x2343, "9.0", "GH200"},
    {0x2345, "9.0", "GH200"},
    {0x2348, "9.0", "GH200 144G HBM3e"},
    // Ampere GA10x workstation, A16/A2
    {0x24b0, "8.6", "RTX A4000"},
    {0x24b1, "8.6", "RTX A4000H"},
    {0x2531, "8.6", "RTX A2000"},
    {0x2571, "8.6", "RTX A2000 12GB"},
    {0x25b0, "8.6", "RTX A1000"},
    {0x25b2, "8.6", "RTX A400"},
    {0x25b6, "8.6", "A16 / A2"},
    // Ada
    {0x26b1, "8.9", "RTX 6000 Ada Generation"},
    {0x26b2, "8.9", "RTX 5000 Ada Generation"},
    {0x26b3, "8.9", "RTX 5880 Ada Generation"},
    {0x26b5, "8.9", "L40"},
    {0x26b7, "8.9", "L20"},
    {0x26b8, "8.9", "L40G"},
    {0x26b9, "8.9", "L40S"},
    {0x26ba, "8.9", "L20"},
    {0x26bb, "8.9", "L30"},
    {0x27b0, "8.9", "RTX 4000 SFF Ada Generation"},
    {0x27b1, "8.9", "RTX 4500 Ada Generation"},
    {0x27b2, "8.9", "RTX 4000 Ada Generation"},
    {0x27b6, "8.9", "L2"},
    {0x27b7, "8.9", "L16"},
    {0x27b8, "8.9", "L4"},
    {0x28b0, "8.9", "RTX 2000 Ada Generation"},
    // Blackwell
    {0x2901, "10.0", "B200"},
    {0x2909, "10.0", "HGX B200 168GB"},
    {0x2920, "10.0", "B100"},
    {0x2941, "10.0", "GB200"},
    {0x29bc, "10.0", "B100"},
    {0x2bb1, "12.0", "RTX PRO 6000 Blackwell Workstation Edition"},
    {0x2bb2, "12.0", "RTX PRO 6000D Blackwell Workstation Edition"},
    {0x2bb3, "12.0", "RTX PRO 5000 Blackwell"},
    {0x2bb4, "12.0", "RTX PRO 6000 Blackwell Max-Q Workstation Edition"},
    {0x2bb5, "12.0", "RTX PRO 6000 Blackwell Server Edition"},
    {0x2bb9, "12.0", "RTX 6000D"},
    {0x2bbc, "12.0", "RTX PRO 6000D Blackwell Max-Q Workstation Edition"},
    {0x2c31, "12.0", "RTX PRO 4500 Blackwell"},
    {0x2c33, "12.0", "RTX PRO 4000 Blackwell SFF Edition"},
    {0x2c34, "12.0", "RTX PRO 4000 Blackwell"},
    {0x2c3a, "12.0", "RTX PRO 4500 Blackwell Server Edition"},
    {0x2d30, "12.0", "RTX PRO 2000 Blackwell"},
    {0x2e12, "12.1", "GB10"},
    {0x3182, "10.3", "B300 SXM6 AC"},
    {0x31a1, "10.3", "GB300"},
    {0x31c2, "10.3", "GB300"},
    {0x31c3, "10.3", "GB300"},
};

bool isArchDigits(std::string_view d) {
  return d.size() >= 2 && d.size() <= 3 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string capabilityForModel(std::string_view model) {
  const ModelRow* row = modelRow(model);
  return row ? row->capability : "";
}

std::string brandForModel(std::string_view model) {
  const ModelRow* row = modelRow(model);
  return row ? row->brand : "";
}

PciGpu gpuForPciDevice(uint32_t device) {
  auto it = std::lower_bound(std::begin(kPciRows), std::end(kPciRows), device,
                             [](const PciRow& r, uint32_t d) { return r.device < d; });
  if (it == std::end(kPciRows) || it->device != device) return {};
  return {it->capability, it->model};
}

std::string generationOf(std::string_view cap) {
  size_t dot = cap.find('.');
  auto major = util::parseUint(cap.substr(0, dot));
  auto minor = dot == std::string_view::npos ? std::nullopt : util::parseUint(cap.substr(dot + 1));
  if (!major || !minor) return {};
  switch (*major) {
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return *minor >= 5 ? "Turing" : "Volta";
    case 8: return *minor == 9 ? "Ada" : "Ampere";
    case 9: return "Hopper";
    case 10:
    case 11:
    case 12: return "Blackwell";
  }
  return {};
}

const std::vector<Generation>& judgedGenerations() {
  static const std::vector<Generation> g = {
      {"Volta", {"7.0"}},          {"Turing", {"7.5"}},
      {"Ampere", {"8.0", "8.6"}},  {"Ada", {"8.9"}},
      {"Hopper", {"9.0"}},         {"Blackwell", {"10.0", "10.3", "12.0", "12.1"}},
  };
  return g;
}

std::string gpuTargetForms() {
  return "a compute capability (9.0, 12.0), an architecture (sm_90, sm_120) or a model name (V100, T4, A100, A10, "
         "L4, L40S, RTX 4090, RTX 6000 Ada, H100, H200, GH200, B200, GB200, B300, GB300, RTX 5090, RTX PRO 6000 "
         "Blackwell, ...)";
}

Result<GpuTarget> parseGpuTarget(std::string_view text) {
  std::string t(util::trim(text));
  auto bad = [&] {
    return Error::Invalid("'" + std::string(text) + "' is not a GPU: give " + gpuTargetForms());
  };
  if (t.empty() || t.size() > 100) return bad();
  // "9.0", "12.1"
  if (size_t dot = t.find('.'); dot != std::string::npos) {
    auto ma = util::parseUint(std::string_view(t).substr(0, dot)), mi = util::parseUint(std::string_view(t).substr(dot + 1));
    if (ma && mi && *ma >= 3 && *ma <= 99 && *mi <= 9 && dot + 2 == t.size()) return GpuTarget{t, t};
    return bad();
  }
  // "sm_90", "sm_100a", "sm_120f"
  std::string lower = util::toLower(t);
  if (lower.starts_with("sm_")) {
    std::string_view d = std::string_view(lower).substr(3);
    if (!d.empty() && (d.back() == 'a' || d.back() == 'f')) d.remove_suffix(1);
    if (!isArchDigits(d) || d[0] == '0') return bad();
    std::string cap = std::string(d.substr(0, d.size() - 1)) + "." + std::string(d.substr(d.size() - 1));
    return GpuTarget{cap, lower};
  }
  std::string cap = capabilityForModel(t);
  if (cap.empty()) return bad();
  return GpuTarget{cap, t};
}

}  // namespace kernodeck::gpu
