// Issue 50, the static read: an image whose layers hold real nvcc objects (tests/fixtures/
// gpu-fatbins: CUDA 13 and CUDA 11.8 shared objects, one as torch's libtorch_cuda.so in a
// site-packages torch) is audited; the report's gpu_code section and expect.json's gpu_code and
// torch.arch_list list every library's SASS and PTX exactly as the judges (cuobjdump, the -gencode
// flags: expected.txt) say, with the layer each came from. A library a later layer replaced or
// removed is not listed; an image without GPU code has no gpu_code at all. The nvcc-labelled test
// makes the fixtures again with the real compilers and compares.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "support.h"

namespace integration_audit_gpu_code_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
std::string fixtures() { return std::string(SOURCE_DIR) + "/tests/fixtures/gpu-fatbins/"; }

// expected.txt's lists of one object: {"sass": [...], "ptx": [...], "compressed": bool}.
std::map<std::string, json> judged(const std::string& dir) {
  std::map<std::string, json> out;
  std::istringstream in(readFile(dir + "expected.txt"));
  std::string name, sass, ptx, compressed;
  while (in >> name >> sass >> ptx >> compressed) {
    auto list = [](std::string v) {
      json a = json::array();
      v = v.substr(v.find('=') + 1);
      for (size_t at = 0; !v.empty();) {
        size_t comma = v.find(',', at);
        a.push_back(v.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
      return a;
    };
    out[name] = {{"sass", list(sass)}, {"ptx", list(ptx)}, {"compressed", compressed == "compressed=yes"}};
  }
  return out;
}

const std::string kSite = "usr/local/lib/python3.11/site-packages";

// Layer 0: a torch venv whose libtorch_cuda.so / libc10_cuda.so are nvcc objects, an nvidia
// wheel's library, a CUDA toolkit library, an extension module, a plain ELF without GPU code and
// a library that layer 1 replaces with a file without GPU code and another it removes.
json imageSpec() {
  std::string dist = kSite + "/torch-2.9.0+cu130.dist-info/";
  auto lib = [](const std::string& path, const std::string& fixture) {
    return json{{"path", path}, {"content_file", fixtures() + fixture}, {"mode", 0755}};
  };
  json layer0 = json::array(
      {{{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
       {{"path", kSite + "/torch/version.py"},
        {"content", "__version__ = '2.9.0+cu130'\ncuda = '13.0'\nhip = None\ngit_version = 'x'\n"}},
       {{"path", dist + "METADATA"}, {"content", "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0+cu130\n"}},
       {{"path", dist + "INSTALLER"}, {"content", "pip\n"}},
       lib(kSite + "/torch/lib/libtorch_cuda.so", "cuda118-sm70-sm80-ptx80.so"),
       lib(kSite + "/torch/lib/libc10_cuda.so", "cuda13-sm80-sm90.so"),
       lib(kSite + "/nvidia/cublas/lib/libcublasLt.so.13", "cuda13-sm100a-sm100f-sm120-ptx120.so"),
       lib("usr/local/cuda-13.0/lib64/libkdk_compressed.so", "cuda13-compressed-sm80-sm90.so"),
       lib("opt/app/ext/_C.cpython-311-x86_64-linux-gnu.so", "cuda13-sm90a.so"),
       lib("usr/lib/x86_64-linux-gnu/libreplaced.so", "cuda118-sm90.so"),
       lib("usr/lib/x86_64-linux-gnu/libremoved.so", "cuda13-sm80-sm90-ptx90.so"),
       {{"path", "usr/lib/x86_64-linux-gnu/libplain.so"}, {"content_file", std::string(EXIT_ZERO_LIB)}}});
  json layer1 = json::array({{{"path", "usr/lib/x86_64-linux-gnu/libreplaced.so"}, {"content", "not ELF any more"}},
                             {{"path", "usr/lib/x86_64-linux-gnu/.wh.libremoved.so"}, {"content", ""}}});
  return {{"tag", "1"},
          {"config", {{"Env", {"PYTHON_VERSION=3.11.7"}}}},
          {"layers", json::array({{{"compression", "gzip"}, {"entries", layer0}},
                                  {{"compression", "gzip"}, {"entries", layer1}}})}};
}

}  // namespace

TEST(AuditGpuCode, EveryLibrarysSassAndPtxAreListedAsTheJudgesSay) {
  std::string d = tempDir("gpucode");
  ASSERT_FALSE(mkimage(imageSpec(), d + "/img").empty());
  RunResult r = run(K + " audit --json --no-cache --expect-out " + d + "/expect.json oci:" + d + "/img:1");
  json report = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.err;
  json expect = json::parse(readFile(d + "/expect.json"), nullptr, false);
  ASSERT_TRUE(expect.is_object()) << r.err;
  json index = json::parse(readFile(d + "/img/index.json"));
  json manifest = json::parse(readFile(d + "/img/blobs/sha256/" +
                                       index["manifests"][0]["digest"].get<std::string>().substr(7)));
  std::string layer0 = manifest["layers"][0]["digest"];

  auto want = judged(fixtures());
  ASSERT_EQ(want.size(), 7u);
  std::string site = "/" + kSite;
  std::map<std::string, std::string> libraries = {
      {"/opt/app/ext/_C.cpython-311-x86_64-linux-gnu.so", "cuda13-sm90a.so"},
      {site + "/nvidia/cublas/lib/libcublasLt.so.13", "cuda13-sm100a-sm100f-sm120-ptx120.so"},
      {site + "/torch/lib/libc10_cuda.so", "cuda13-sm80-sm90.so"},
      {site + "/torch/lib/libtorch_cuda.so", "cuda118-sm70-sm80-ptx80.so"},
      {"/usr/local/cuda-13.0/lib64/libkdk_compressed.so", "cuda13-compressed-sm80-sm90.so"}};
  json wantLibs = json::array();
  for (const auto& [path, fixture] : libraries) {  // sorted by path, as the report lists them
    const json& j = want.at(fixture);
    wantLibs.push_back(
        {{"library", path}, {"layer", layer0}, {"sass", j["sass"]}, {"ptx", j["ptx"]}, {"compressed", j["compressed"]}});
  }
  // The report: the same lists, with how many fatbins and entries were read.
  ASSERT_TRUE(report.contains("gpu_code")) << r.out;
  json reported = report["gpu_code"]["libraries"];
  ASSERT_EQ(reported.size(), wantLibs.size()) << reported.dump(1);
  for (size_t i = 0; i < reported.size(); ++i) {
    json l = reported[i];
    EXPECT_GE(l["fatbins"].get<int>(), 1) << l.dump();
    l.erase("fatbins");
    l.erase("entries");
    EXPECT_EQ(l, wantLibs[i]);
  }
  // expect.json: gpu_code, and torch.arch_list from torch's own two libraries, as
  // torch.cuda.get_arch_list() lists them (SASS, then PTX).
  EXPECT_EQ(expect["gpu_code"], wantLibs) << expect.dump(1);
  EXPECT_EQ(expect["torch"]["arch_list"], json({"sm_70", "sm_80", "sm_90", "compute_80"})) << expect.dump(1);
  EXPECT_EQ(countFindings(report, "gpu.fatbin.malformed"), 0);
  // The text report names each library once, with its SASS and PTX.
  RunResult text = run(K + " audit --no-cache oci:" + d + "/img:1");
  EXPECT_NE(text.out.find("gpu code  /opt/app/ext/_C.cpython-311-x86_64-linux-gnu.so  SASS sm_90a  PTX none\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(site + "/nvidia/cublas/lib/libcublasLt.so.13  SASS sm_100a sm_100f sm_120  "
                                 "PTX compute_120  (compressed)\n"),
            std::string::npos)
      << text.out;
}

TEST(AuditGpuCode, AMalformedFatbinIsAFindingAndAnImageWithoutGpuCodeSaysNothing) {
  std::string d = tempDir("gpucodebad");
  // The 2 GB container of a hostile library: a warning naming it, the audit completes.
  std::string lib = readFile(fixtures() + "cuda13-sm80-sm90.so");
  size_t at = lib.find(std::string("\x50\xed\x55\xba", 4));
  ASSERT_NE(at, std::string::npos);
  for (int i = 0; i < 8; ++i) lib[at + 8 + i] = static_cast<char>(((uint64_t(2) << 30) >> (8 * i)) & 0xff);
  writeFile(d + "/hostile.so", lib);
  json spec = {{"tag", "1"},
               {"layers", json::array({{{"compression", "gzip"},
                                        {"entries", json::array({{{"path", "usr/lib/libhostile.so"},
                                                                  {"content_file", d + "/hostile.so"}},
                                                                 {{"path", "usr/lib/libplain.so"},
                                                                  {"content_file", std::string(EXIT_ZERO_LIB)}}})}}})}};
  ASSERT_FALSE(mkimage(spec, d + "/img").empty());
  RunResult r = run(K + " audit --json --no-cache --expect-out " + d + "/expect.json oci:" + d + "/img:1");
  json report = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.err;
  ASSERT_EQ(countFindings(report, "gpu.fatbin.malformed"), 1) << report["findings"].dump(1);
  for (const auto& f : report["findings"])
    if (f["code"] == "gpu.fatbin.malformed") {
      EXPECT_EQ(f["path"], "/usr/lib/libhostile.so");
      EXPECT_NE(f["message"].get<std::string>().find("declares 2147483648 bytes of entries, past the end of the file"),
                std::string::npos)
          << f.dump();
    }
  // The same image without the hostile library: no section, no gpu_code in the expectation.
  json plain = spec;
  plain["layers"][0]["entries"].erase(0);
  ASSERT_FALSE(mkimage(plain, d + "/plain").empty());
  r = run(K + " audit --json --no-cache --expect-out " + d + "/plain.json oci:" + d + "/plain:1");
  report = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.err;
  EXPECT_FALSE(report.contains("gpu_code"));
  json expect = json::parse(readFile(d + "/plain.json"), nullptr, false);
  EXPECT_FALSE(expect.contains("gpu_code")) << expect.dump();
}

// make-gpu-fatbins run again with the real compilers (CUDA 13's nvcc, and CUDA 11.8's nvcc and
// cuobjdump from Debian's non-free nvidia-cuda-toolkit): the judges still say what expected.txt
// says, and Kernodeck reads the new objects as it reads the committed ones. Skips, naming what is
// missing, without both toolkits (KDK_NVCC13 and KDK_CUDA118_BIN / KDK_CUOBJDUMP say where they are).
TEST(GpuFatbinTools, TheFixturesMadeAgainReadAsTheirJudgesSay) {
  std::string d = tempDir("nvcc") + "/";
  RunResult made = run(fixtures() + "make-gpu-fatbins " + d);
  if (made.code == 3) GTEST_SKIP() << made.err;
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_EQ(readFile(d + "expected.txt"), readFile(fixtures() + "expected.txt"));
  auto want = judged(d);
  ASSERT_EQ(want.size(), 7u);
  // All of them in one image, each audited as the judge says.
  json entries = json::array();
  for (const auto& [name, j] : want) entries.push_back({{"path", "opt/lib/" + name}, {"content_file", d + name}});
  json spec = {{"tag", "1"}, {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
  ASSERT_FALSE(mkimage(spec, d + "img").empty());
  RunResult r = run(K + " audit --json --no-cache --expect-out " + d + "expect.json oci:" + d + "img:1");
  json expect = json::parse(readFile(d + "expect.json"), nullptr, false);
  ASSERT_TRUE(expect.is_object()) << r.err;
  ASSERT_EQ(expect["gpu_code"].size(), want.size()) << expect.dump(1);
  for (const auto& l : expect["gpu_code"]) {
    std::string name = l["library"].get<std::string>().substr(std::string("/opt/lib/").size());
    EXPECT_EQ(l["sass"], want.at(name)["sass"]) << name;
    EXPECT_EQ(l["ptx"], want.at(name)["ptx"]) << name;
    EXPECT_EQ(l["compressed"], want.at(name)["compressed"]) << name;
  }
}

}  // namespace integration_audit_gpu_code_test

namespace integration_audit_gpu_code_test {

// Issue 50's real library: Debian's libcublasLt.so.11 (non-free libcublaslt11, 575 MB, about
// 2,000 cubins from sm_35 to sm_90 in some 800 fatbins) in an image layer, read as the layer
// streams by, lists what CUDA 11.8's cuobjdump lists. Skips, naming what is missing, without the
// library (KDK_CUBLASLT, else Debian's path) or cuobjdump (KDK_CUOBJDUMP, else PATH).
TEST(GpuCodeCublasLt, TheLibraryInALayerListsWhatCuobjdumpLists) {
  const char* envLib = std::getenv("KDK_CUBLASLT");
  std::string lib = envLib ? envLib : "/usr/lib/x86_64-linux-gnu/libcublasLt.so.11";
  const char* envDump = std::getenv("KDK_CUOBJDUMP");
  std::string cuobjdump = envDump ? envDump : "cuobjdump";
  if (!exists(lib)) GTEST_SKIP() << "no " << lib << " (Debian non-free libcublaslt11; or set KDK_CUBLASLT)";
  if (run("command -v " + cuobjdump).code != 0)
    GTEST_SKIP() << "no cuobjdump (Debian non-free nvidia-cuda-toolkit; or set KDK_CUOBJDUMP)";
  auto judge = [&](const std::string& flag, const std::string& sed) {
    RunResult r = run(cuobjdump + " " + flag + " " + lib + " 2>/dev/null | sed -n '" + sed + "' | sort -u");
    json names = json::array();
    std::istringstream in(r.out);
    for (std::string n; std::getline(in, n);) names.push_back(n);
    return names;
  };
  json sass = judge("--list-elf", "s/.*\\.\\(sm_[0-9a-z]*\\)\\.cubin$/\\1/p");
  json ptx = judge("--list-ptx", "s/.*\\.sm_\\([0-9a-z]*\\)\\.ptx$/compute_\\1/p");
  ASSERT_GE(sass.size(), 5u) << "cuobjdump read no cubins of " << lib;
  auto byArch = [](json a) {  // "sm_35" < "sm_100": by number, as the report lists them
    std::vector<std::string> v = a;
    std::sort(v.begin(), v.end(), [](const std::string& x, const std::string& y) {
      auto num = [](const std::string& s) { return std::stoi(s.substr(s.find('_') + 1)); };
      return num(x) != num(y) ? num(x) < num(y) : x < y;
    });
    return json(v);
  };
  std::string d = tempDir("cublaslt");
  json spec = {{"tag", "1"},
               {"layers", json::array({{{"compression", "none"},
                                        {"entries", json::array({{{"path", "usr/lib/x86_64-linux-gnu/libcublasLt.so.11"},
                                                                  {"content_file", lib}}})}}})}};
  ASSERT_FALSE(mkimage(spec, d + "/img").empty());
  RunResult r = run(K + " audit --json --no-cache --expect-out " + d + "/expect.json oci:" + d + "/img:1");
  json expect = json::parse(readFile(d + "/expect.json"), nullptr, false);
  run("rm -rf " + d + "/img");
  ASSERT_TRUE(expect.is_object()) << r.err;
  ASSERT_EQ(expect["gpu_code"].size(), 1u) << expect.dump(1);
  EXPECT_EQ(expect["gpu_code"][0]["sass"], byArch(sass));
  EXPECT_EQ(expect["gpu_code"][0]["ptx"], byArch(ptx));
}

}  // namespace integration_audit_gpu_code_test
