// Times and durations as Kernodeck writes and reads them: UTC timestamps in RFC 3339 with
// milliseconds ("2026-12-01T14:00:00.123Z"), as signed into attestations, and durations as
// flags give them ("90s", "45m", "12h", "7d", "1w", or a sum such as "1d12h"). Computed with
// <chrono>'s calendar, never the C library's time zone functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kernodeck::util {

// Milliseconds since the Unix epoch, now.
int64_t nowMs();

// "YYYY-MM-DDTHH:MM:SS.mmmZ" for `ms` since the epoch.
std::string utcTimestampMs(int64_t ms);

// Parses an RFC 3339 timestamp ("Z" or a numeric offset; fractional seconds cut to
// milliseconds) into milliseconds since the epoch; nullopt for anything else, including
// impossible dates ("2026-02-30") and years outside 1970..9999.
std::optional<int64_t> parseTimestampMs(std::string_view text);

// Parses a duration: one or more NUMBER UNIT pairs, UNIT one of s, m, h, d, w; a bare number
// is refused (its unit would be a guess). Seconds; nullopt when malformed, zero or above 100 years.
std::optional<int64_t> parseDurationSeconds(std::string_view text);
// A duration as a flag gives it, in its largest whole unit: 90 -> "90s", 120 -> "2m", 7200 -> "2h".
std::string formatDurationSeconds(int64_t seconds);

}  // namespace kernodeck::util
