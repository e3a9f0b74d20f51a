#include "kernodeck/os/os_release.h"

#include <gtest/gtest.h>

namespace os_os_release_test {

using namespace kernodeck::os;

TEST(OsRelease, ParsesQuotedAndBareValues) {
  auto kv = parseOsRelease(
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n# comment\nVERSION_ID='12'\n"
      "BAD LINE\nHOME_URL=\"https://www.debian.org/\"\nQ=\"a \\\"b\\\"\"\n");
  EXPECT_EQ(kv["PRETTY_NAME"], "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(kv["ID"], "debian");
  EXPECT_EQ(kv["VERSION_ID"], "12");
  EXPECT_EQ(kv["Q"], "a \"b\"");
  EXPECT_EQ(kv.count("BAD LINE"), 0u);
}

}  // namespace os_os_release_test
