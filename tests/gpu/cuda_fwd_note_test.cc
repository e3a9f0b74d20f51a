#include "kernodeck/gpu/cuda_fwd_note.h"

#include <gtest/gtest.h>

#include "elf_note_fixture.h"

namespace gpu_cuda_fwd_note_test {

using namespace kernodeck;
using namespace kernodeck::gpu;

namespace {

const char* kNote575 =
    R"({"format":1,"CUDA version":"12.9","driver":[535,550,560,565,570,575],"device":[1,2,7,8,9,10,11,12,13,14]})";

ByteReader readerOf(const std::string& bytes) {
  return [bytes](uint64_t off, size_t len) { return off >= bytes.size() ? std::string() : bytes.substr(off, len); };
}

}  // namespace

TEST(CudaFwdNote, ReadsTheNoteOfALibrary) {
  auto n = readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote(kNote575)));
  ASSERT_TRUE(n.ok()) << n.error().message;
  ASSERT_TRUE(n->has_value());
  EXPECT_EQ((*n)->format, 1);
  EXPECT_EQ((*n)->cudaVersion, "12.9");
  EXPECT_EQ((*n)->driverBranches, (std::vector<int>{535, 550, 560, 565, 570, 575}));
  EXPECT_EQ((*n)->devices.size(), 10u);
  // Keys are matched without regard to case, as the toolkit's Go JSON reader matches them.
  auto upper = readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote(R"({"Format":1,"CUDA Version":"13.1"})")));
  ASSERT_TRUE(upper.ok() && upper->has_value());
  EXPECT_EQ((*upper)->cudaVersion, "13.1");
}

// cuda-compat for arm64 (SBSA, GH200/GB200 images) ships an aarch64 libcuda with the same note:
// read the same way, whatever the build machine's architecture.
TEST(CudaFwdNote, AnAarch64CompatLibraryIsReadTheSame) {
  std::string arm = kdktest::elfWithFwdCompatNote(kNote575, "NVIDIA Corporation", 0xb7);
  ASSERT_EQ(static_cast<unsigned char>(arm[18]), 0xb7u);
  auto n = readFwdCompatNote(readerOf(arm));
  ASSERT_TRUE(n.ok()) << n.error().message;
  ASSERT_TRUE(n->has_value());
  EXPECT_EQ((*n)->cudaVersion, "12.9");
  EXPECT_EQ((*n)->driverBranches, (std::vector<int>{535, 550, 560, 565, 570, 575}));
}

TEST(CudaFwdNote, WhatIsNoNoteAndWhatIsBroken) {
  // Another vendor's note in the section is no note, as the toolkit reads it.
  auto other = readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote(kNote575, "Example Inc")));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  auto notJson = readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote("{not json")));
  EXPECT_FALSE(notJson.ok());
  auto badType = readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote(R"({"driver":"550"})")));
  EXPECT_FALSE(badType.ok());
  EXPECT_FALSE(readFwdCompatNote(readerOf("not an elf file at all, just text")).ok());
  std::string lib = kdktest::elfWithFwdCompatNote(kNote575);
  EXPECT_FALSE(readFwdCompatNote(readerOf(lib.substr(0, lib.size() - 10))).ok());  // headers cut off
  std::string huge = lib;
  kdktest::putLe(huge, lib.size() - 2 * 64 + 32, uint64_t(1) << 40, 8);  // the note's size: 1 TiB
  EXPECT_FALSE(readFwdCompatNote(readerOf(huge)).ok());
}

// The note's JSON is the image's: nested past util::kMaxJsonDepth it is refused by the bounded
// reader with one line naming the note, before any tree is built.
TEST(CudaFwdNote, ADeeplyNestedDescriptionIsOneLineError) {
  std::string deep = "{\"driver\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto note = parseFwdCompatDescription(deep);
  ASSERT_FALSE(note.ok());
  EXPECT_NE(note.error().message.find("the note's description nests arrays and objects more than 256"),
            std::string::npos)
      << note.error().message;
  EXPECT_EQ(note.error().message.find('\n'), std::string::npos);
  EXPECT_FALSE(readFwdCompatNote(readerOf(kdktest::elfWithFwdCompatNote(deep))).ok());
}

TEST(CudaFwdNote, DecidesAsTheToolkit) {
  FwdCompatNote n = *parseFwdCompatDescription(kNote575);
  struct Case {
    const char *lib, *hostDriver, *hostCuda;
    bool applies;
  } cases[] = {
      {"575.57.08", "550.54.15", "", true},   // a listed branch, an older driver
      {"575.57.08", "590.44.01", "", false},  // branch 590 not listed
      {"575.57.08", "470.57.02", "", false},  // branch 470 not listed
      {"575.57.08", "575.64.05", "", false},  // the host is newer than the library
      {"", "", "12.8", true},                 // no driver versions: the CUDA versions decide
      {"", "", "12.9", false},
  };
  for (const auto& c : cases) {
    auto d = fwdCompatApplies(n, c.lib, c.hostDriver, c.hostCuda);
    EXPECT_EQ(d.applies, c.applies) << c.lib << " on " << c.hostDriver << c.hostCuda << ": " << d.why;
    EXPECT_FALSE(d.why.empty());
  }
  EXPECT_EQ(compatLibraryDriver("libcuda.so.575.57.08"), "575.57.08");
  EXPECT_EQ(compatLibraryDriver("libcuda.so.1"), "");
  EXPECT_EQ(compatLibraryDriver("libcuda.so"), "");
}

// Section headers claiming 65535 entries of 65535 bytes: the reader is never asked for the 4 GiB
// they span (the hook's pread reader allocates what it is asked for, at every container start).
TEST(CudaFwdNote, AHugeSectionHeaderTableIsRefusedBeforeItIsRead) {
  std::string lib = kdktest::elfWithFwdCompatNote(kNote575);
  kdktest::putLe(lib, 0x3A, 65535, 2);  // e_shentsize
  kdktest::putLe(lib, 0x3C, 65535, 2);  // e_shnum
  size_t largest = 0;
  auto n = readFwdCompatNote([&](uint64_t off, size_t len) {
    largest = std::max(largest, len);
    return off >= lib.size() ? std::string() : lib.substr(off, std::min<size_t>(len, 1 << 20));
  });
  EXPECT_FALSE(n.ok());
  EXPECT_LE(largest, size_t(4) << 20);
}

}  // namespace gpu_cuda_fwd_note_test
