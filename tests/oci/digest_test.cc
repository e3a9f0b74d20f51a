#include "kernodeck/oci/digest.h"

#include <gtest/gtest.h>

namespace oci_digest_test {

using namespace kernodeck::oci;

TEST(Digest, Grammar) {
  const std::string hex64(64, 'a'), hex128(128, 'b');
  struct Case {
    std::string in;
    bool ok;
    bool verifiable;
  } cases[] = {
      {"sha256:" + hex64, true, true},
      {"sha512:" + hex128, true, true},
      {"sha256:" + std::string(64, 'A'), false, false},  // upper-case hex
      {"sha256:" + std::string(63, 'a'), false, false},  // short
      {"sha512:" + hex64, false, false},                 // wrong length
      {"sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564", true, false},
      {"multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8", true, false},
      {"sha256:", false, false},
      {":" + hex64, false, false},
      {"sha256" + hex64, false, false},
      {"SHA256:" + hex64, false, false},     // upper-case algorithm
      {"sha256+:" + hex64, false, false},    // dangling separator
      {"sha256..x:" + hex64, false, false},  // double separator
      {"sha256:" + hex64.substr(1) + "/", false, false},
  };
  for (const auto& c : cases) {
    auto d = parseDigest(c.in);
    EXPECT_EQ(d.ok(), c.ok) << c.in;
    if (d.ok()) {
      EXPECT_EQ(d->verifiable(), c.verifiable) << c.in;
    }
  }
}

}  // namespace oci_digest_test
