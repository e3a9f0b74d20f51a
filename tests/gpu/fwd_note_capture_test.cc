// The bytes an audit keeps of a cuda-compat libcuda.so as its layer streams by give the note that
// reading the whole file gives, whatever the layout and however the stream is cut into blocks.
#include "kernodeck/gpu/fwd_note_capture.h"

#include <gtest/gtest.h>

#include "elf_note_fixture.h"

namespace gpu_fwd_note_capture_test {

using namespace kernodeck;
using namespace kernodeck::gpu;

namespace {

const char* kNote = R"({"format":1,"CUDA version":"13.1","driver":[535,550,570,575,580,590],"device":[1,2,7,8,9,10]})";

std::string keep(const std::string& file, size_t block) {
  FwdNoteKeeper k(file.size());
  for (size_t at = 0; at < file.size(); at += block) k.feed(file.data() + at, std::min(block, file.size() - at));
  return k.finish();
}

Result<std::optional<FwdCompatNote>> whole(const std::string& file) {
  return readFwdCompatNote(
      [&](uint64_t off, size_t len) { return off >= file.size() ? std::string() : file.substr(off, len); });
}

// The fixture with `gap` bytes of filler (which may hold decoys) inserted after the ELF header:
// every offset in the headers moved by `gap`, so the note is far from the section headers.
std::string spread(const std::string& lib, size_t gap, const std::string& filler = "") {
  std::string f(gap, 'x');
  for (size_t at = 0; at + filler.size() <= gap && !filler.empty(); at += gap / 3 + 1)
    f.replace(at, filler.size(), filler);
  std::string out = lib.substr(0, 64) + f + lib.substr(64);
  uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(lib[0x28 + i]);
  kdktest::putLe(out, 0x28, shoff + gap, 8);
  for (int s = 1; s < 3; ++s) {
    size_t at = shoff + gap + s * 64 + 24;
    uint64_t off = 0;
    for (int i = 7; i >= 0; --i) off = (off << 8) | static_cast<unsigned char>(out[at + i]);
    kdktest::putLe(out, at, off + gap, 8);
  }
  return out;
}

}  // namespace

TEST(FwdNoteCapture, KeepsWhatTheNoteIsReadFromWhateverTheBlocks) {
  std::string small = kdktest::elfWithFwdCompatNote(kNote);
  std::string far = spread(small, 3 << 20);  // the note 3 MiB before the section headers
  std::string decoys = spread(small, 1 << 20, std::string("NVIDIA Corporation .note.cuda.fwd_compatibility"));
  for (const std::string* lib : {&small, &far, &decoys}) {
    auto want = whole(*lib);
    ASSERT_TRUE(want.ok() && want->has_value()) << (want.ok() ? "no note" : want.error().message);
    for (size_t block : {size_t(1), size_t(7), size_t(4096), size_t(65536), lib->size()}) {
      if (block == 1 && lib->size() > 100000) continue;
      std::string kept = keep(*lib, block);
      EXPECT_LT(kept.size(), 1024u * 1024) << "block " << block;  // not the file
      auto got = readKeptFwdCompatNote(kept);
      ASSERT_TRUE(got.ok()) << got.error().message << " (block " << block << ")";
      ASSERT_TRUE(got->has_value());
      EXPECT_EQ((*got)->toJson(), (*want)->toJson());
    }
  }
  // A 48 MiB library keeps a few hundred KiB.
  std::string huge = spread(small, 48u << 20);
  EXPECT_LT(keep(huge, 1 << 16).size(), 300u * 1024);
}

TEST(FwdNoteCapture, NoNoteAndBrokenNotesReadAsOverTheWholeFile) {
  std::string lib = kdktest::elfWithFwdCompatNote(kNote);
  // Not ELF, a malformed description, headers cut off: errors, as over the whole file.
  EXPECT_FALSE(readKeptFwdCompatNote(keep("just text, not ELF at all", 5)).ok());
  EXPECT_FALSE(readKeptFwdCompatNote(keep(kdktest::elfWithFwdCompatNote("{not json"), 16)).ok());
  EXPECT_FALSE(readKeptFwdCompatNote(keep(lib.substr(0, lib.size() - 10), 16)).ok());
  // An ELF file without section headers: no note.
  std::string noSections = lib;
  kdktest::putLe(noSections, 0x28, 0, 8);
  auto none = readKeptFwdCompatNote(keep(noSections, 64));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // A damaged encoding is an error, not a note.
  std::string kept = keep(lib, 64);
  EXPECT_FALSE(readKeptFwdCompatNote(kept.substr(0, kept.size() - 5)).ok());
  EXPECT_FALSE(readKeptFwdCompatNote(lib).ok());
  EXPECT_FALSE(isKeptBytes(lib));
}

}  // namespace gpu_fwd_note_capture_test
