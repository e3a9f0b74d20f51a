// util::FileDigests: one set of contexts for file after file gives each file its own digests.
#include "kernodeck/util/file_digests.h"

#include <gtest/gtest.h>

#include "kernodeck/util/hash.h"

namespace util_file_digests_test {

using kernodeck::util::FileDigests;

TEST(FileDigests, KnownVectorsFileAfterFile) {
  FileDigests d;
  std::string sha256, md5, sha1;
  d.start(FileDigests::kSha256 | FileDigests::kMd5 | FileDigests::kSha1);
  d.update("a", 1);
  d.update("bc", 2);
  d.finish(sha256, md5, sha1);
  EXPECT_EQ(sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(md5, "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(sha1, "a9993e364706816aba3e25717850c26c9cd0d89d");
  // The next file starts from nothing (no bytes of the one before), with only the digests asked for.
  std::string sha256b, md5b = "untouched", sha1b;
  d.start(FileDigests::kSha256);
  d.update("hello", 5);
  d.finish(sha256b, md5b, sha1b);
  EXPECT_EQ(sha256b, kernodeck::util::sha256Hex("hello"));
  EXPECT_EQ(md5b, "untouched");
  EXPECT_TRUE(sha1b.empty());
  // An empty file has the empty input's digest.
  std::string e256, e5, e1;
  d.start(FileDigests::kMd5);
  d.finish(e256, e5, e1);
  EXPECT_EQ(e5, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_TRUE(e256.empty());
}

}  // namespace util_file_digests_test
