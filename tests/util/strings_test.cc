#include "kernodeck/util/strings.h"
#include "kernodeck/util/html.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>

namespace util_strings_test {

using namespace kernodeck::util;

TEST(Strings, SplitKeepsEmptyFields) {
  EXPECT_EQ(split("a//b", '/'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("", '/'), (std::vector<std::string>{""}));
}

TEST(Strings, EditDistance) {
  EXPECT_EQ(editDistance("audit", "adit"), 1u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}

TEST(Strings, ParseUintRejectsJunkAndOverflow) {
  EXPECT_EQ(parseUint("42"), 42u);
  EXPECT_FALSE(parseUint("-1"));
  EXPECT_FALSE(parseUint("1a"));
  EXPECT_FALSE(parseUint(""));
  EXPECT_FALSE(parseUint("18446744073709551616"));
  EXPECT_EQ(parseUint("18446744073709551615"), UINT64_MAX);
}

TEST(Strings, PrintableEscapesControlCharacters) {
  EXPECT_EQ(printable("a\nb\x1b"), "a\\x0ab\\x1b");
  EXPECT_EQ(printable(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
}

TEST(Strings, HtmlEscapeEscapesEveryMarkupCharacter) {
  EXPECT_EQ(kernodeck::util::htmlEscape("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(kernodeck::util::htmlEscape("plain"), "plain");
}

// The hook's clock: the same text strftime gives for UTC, without glibc's time functions (which
// read the time zone file).
TEST(Strings, UtcTimestampIsRfc3339InUtc) {
  // The same clock as utcTimestamp (system_clock, CLOCK_REALTIME): time(2) reads the kernel's
  // coarse clock, up to a tick behind, and across a second's boundary it named the second before
  // both readings (a fresh-clone run: 23:58:07 "between" 23:58:06 and 23:58:06).
  auto viaStrftime = [] {
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    struct tm tm {};
    ::gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(buf);
  };
  std::string before = viaStrftime(), t = utcTimestamp(), after = viaStrftime();
  EXPECT_TRUE(t == before || t == after) << t << " between " << before << " and " << after;
  EXPECT_EQ(t.size(), 20u) << t;
}

}  // namespace util_strings_test
