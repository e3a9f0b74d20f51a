// A wheel file read against a lock's hash: hashed before it is parsed, then its central directory
// and RECORD read, each member taking its RECORD hash without being inflated.
#include "kernodeck/python/wheel_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <utility>

#include "kernodeck/util/hash.h"

namespace python_wheel_file_test {

using namespace kernodeck::python;
using kernodeck::util::sha256Hex;

namespace {

std::string le(uint32_t v, int n) {
  std::string b;
  for (int i = 0; i < n; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return b;
}

uint32_t crc32(const std::string& data) {  // IEEE, bit by bit
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A zip of `members` (name, bytes), stored (no compression), with its central directory.
std::string zipOf(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string body, directory;
  for (const auto& [name, data] : members) {
    std::string fields = le(0, 2) + le(0, 2) + le(0, 2) + le(0x21, 2) + le(crc32(data), 4) +
                         le(static_cast<uint32_t>(data.size()), 4) + le(static_cast<uint32_t>(data.size()), 4) +
                         le(static_cast<uint32_t>(name.size()), 2) + le(0, 2);
    directory += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + fields + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                 le(static_cast<uint32_t>(body.size()), 4) + name;
    body += le(0x04034b50, 4) + le(20, 2) + fields + name + data;
  }
  auto n = static_cast<uint32_t>(members.size());
  return body + directory + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(n, 2) + le(n, 2) +
         le(static_cast<uint32_t>(directory.size()), 4) + le(static_cast<uint32_t>(body.size()), 4) + le(0, 2);
}

std::string recordDigest(const std::string& data) {
  kernodeck::util::Hasher h("sha256");
  h.update(data);
  return "sha256=" + kernodeck::util::base64UrlNoPad(h.raw());
}

struct TempWheel {
  TempWheel() {
    char d[] = "/tmp/kdk-wheel-XXXXXX";
    if (::mkdtemp(d)) dir = d;
    path = dir + "/x-1-py3-none-any.whl";
  }
  ~TempWheel() {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
  void write(const std::string& bytes) const { std::ofstream(path, std::ios::binary) << bytes; }
  std::string dir, path;
};

const WheelMember* member(const WheelFile& w, const std::string& path) {
  for (const auto& m : w.members)
    if (m.path == path) return &m;
  return nullptr;
}

// The wheel is hashed before it is parsed: bytes without the lock's hash are refused as Corrupt
// whatever they hold; a wheel with the hash is still refused when a member would leave the
// install directory, or when it is no zip at all.
TEST(WheelFile, HashedBeforeParsedAndMembersConfined) {
  TempWheel t;
  ASSERT_FALSE(t.dir.empty());
  std::string bytes = zipOf({{"../../etc/evil", "owned"}, {"x-1.dist-info/RECORD", ""}});
  t.write(bytes);
  auto wrong = readWheelFile(t.path, {std::string(64, 'a')});
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(wrong.error().is(kernodeck::ErrorKind::Corrupt)) << wrong.error().message;
  EXPECT_NE(wrong.error().message.find("not the lock's"), std::string::npos);
  auto hostile = readWheelFile(t.path, {sha256Hex(bytes)});
  ASSERT_FALSE(hostile.ok());
  EXPECT_TRUE(hostile.error().is(kernodeck::ErrorKind::Invalid)) << hostile.error().message;
  EXPECT_NE(hostile.error().message.find("would leave"), std::string::npos) << hostile.error().message;
  std::string noDirectory = bytes.substr(0, bytes.find(le(0x02014b50, 4)));
  t.write(noDirectory);
  auto notZip = readWheelFile(t.path, {sha256Hex(noDirectory)});
  ASSERT_FALSE(notZip.ok());
  EXPECT_TRUE(notZip.error().is(kernodeck::ErrorKind::Invalid)) << notZip.error().message;
  auto absent = readWheelFile(t.dir + "/none.whl", {std::string(64, 'a')});
  ASSERT_FALSE(absent.ok());
  EXPECT_TRUE(absent.error().is(kernodeck::ErrorKind::NotFound));
}

// Each member takes the hash its wheel's RECORD gives (the member itself is not inflated: here the
// RECORD's hash is not its bytes'); only what RECORD gives no hash for is read and hashed, and
// only members it does not list at all (signatures excepted) are named as unrecorded. Scripts
// under .data/scripts/ say whether they start with #!python.
TEST(WheelFile, MembersTakeTheirRecordHashes) {
  TempWheel t;
  ASSERT_FALSE(t.dir.empty());
  std::string record = "x/a.py," + recordDigest("B") + ",1\n" + "x-1.data/scripts/run," +
                       recordDigest("#!python\nrun()\n") + ",15\n" + "x-1.data/scripts/sh," +
                       recordDigest("#!/bin/sh\n") + ",10\n" + "x-1.dist-info/RECORD,,\nx-1.dist-info/RECORD.jws,,\n";
  std::string bytes = zipOf({{"x/a.py", "A"},
                             {"x/", ""},
                             {"x-1.data/scripts/run", "#!python\nrun()\n"},
                             {"x-1.data/scripts/sh", "#!/bin/sh\n"},
                             {"x/extra.txt", "extra"},
                             {"x-1.dist-info/RECORD.jws", "signed"},
                             {"x-1.dist-info/RECORD", record}});
  t.write(bytes);
  auto w = readWheelFile(t.path, {std::string(64, 'b'), sha256Hex(bytes)});
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->sha256, sha256Hex(bytes));
  EXPECT_EQ(w->distInfo, "x-1.dist-info");
  ASSERT_EQ(w->members.size(), 6u);  // the folder entry is not a member
  EXPECT_EQ(member(*w, "x/a.py")->sha256, sha256Hex("B"));
  EXPECT_EQ(member(*w, "x/a.py")->size, 1u);
  EXPECT_TRUE(member(*w, "x-1.data/scripts/run")->pythonShebang);
  EXPECT_FALSE(member(*w, "x-1.data/scripts/sh")->pythonShebang);
  EXPECT_FALSE(member(*w, "x/a.py")->pythonShebang);
  EXPECT_EQ(member(*w, "x/extra.txt")->sha256, sha256Hex("extra"));
  EXPECT_EQ(member(*w, "x-1.dist-info/RECORD.jws")->sha256, sha256Hex("signed"));
  EXPECT_EQ(member(*w, "x-1.dist-info/RECORD")->sha256, "");
  EXPECT_EQ(w->unrecorded, std::vector<std::string>{"x/extra.txt"});
}

// A wheel larger than the tail kept from the hashing read: its local headers before that tail
// are read again from the file, its central directory and RECORD from memory.
TEST(WheelFile, LargeWheelReadBeyondItsKeptTail) {
  TempWheel t;
  ASSERT_FALSE(t.dir.empty());
  std::string big(9u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 24);
  std::string record = "x/big.bin," + recordDigest(big) + "," + std::to_string(big.size()) + "\nx/b.py," +
                       recordDigest("b") + ",1\nx-1.dist-info/RECORD,,\n";
  std::string bytes = zipOf({{"x/a.txt", "a"}, {"x/big.bin", big}, {"x/b.py", "b"}, {"x-1.dist-info/RECORD", record}});
  t.write(bytes);
  auto w = readWheelFile(t.path, {sha256Hex(bytes)});
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(w->members.size(), 4u);
  EXPECT_EQ(member(*w, "x/big.bin")->sha256, sha256Hex(big));
  EXPECT_EQ(member(*w, "x/big.bin")->size, big.size());
  EXPECT_EQ(member(*w, "x/a.txt")->sha256, sha256Hex("a"));  // unlisted: read before the tail
  EXPECT_EQ(w->unrecorded, std::vector<std::string>{"x/a.txt"});
}

}  // namespace

}  // namespace python_wheel_file_test
