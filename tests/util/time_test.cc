// Timestamps (RFC 3339, as signed into attestations) and durations (--max-age).
#include "kernodeck/util/time.h"

#include <gtest/gtest.h>

namespace util_time_test {

using namespace kernodeck::util;

TEST(Time, TimestampsRoundTripAndOffsetsAreApplied) {
  EXPECT_EQ(parseTimestampMs("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parseTimestampMs("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(parseTimestampMs("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(parseTimestampMs("2026-12-01T14:00:00.123456789Z"), parseTimestampMs("2026-12-01T14:00:00.123Z"));
  int64_t t = *parseTimestampMs("2099-01-01T00:00:00Z");
  EXPECT_EQ(utcTimestampMs(t), "2099-01-01T00:00:00.000Z");
  int64_t now = nowMs();
  EXPECT_EQ(parseTimestampMs(utcTimestampMs(now)), now);
  EXPECT_GT(now, *parseTimestampMs("2025-01-01T00:00:00Z"));
  for (const char* bad :
       {"", "2026-12-01", "2026-12-01T14:00:00", "2026-02-30T00:00:00Z", "1969-12-31T23:59:59Z", "2026-12-01T24:00:00Z",
        "2026-12-01T14:00:00Zjunk", "2026-12-01T14:00:00.Z", "+2026-12-01T14:00:00Z", "2026-12-01T14:00:00+1:00"})
    EXPECT_FALSE(parseTimestampMs(bad).has_value()) << bad;
}

TEST(Time, DurationsNeedAUnit) {
  EXPECT_EQ(parseDurationSeconds("90s"), 90);
  EXPECT_EQ(parseDurationSeconds("45m"), 2700);
  EXPECT_EQ(parseDurationSeconds("12h"), 43200);
  EXPECT_EQ(parseDurationSeconds("7d"), 604800);
  EXPECT_EQ(parseDurationSeconds("1w"), 604800);
  EXPECT_EQ(parseDurationSeconds("1d12h"), 129600);
  for (const char* bad : {"", "30", "d", "0s", "-1d", "1.5h", "1y", "1d ", "99999999999999d"})
    EXPECT_FALSE(parseDurationSeconds(bad).has_value()) << bad;
}

}  // namespace util_time_test
