// Small string helpers with no project knowledge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::util {

std::vector<std::string> split(std::string_view s, char sep);
// Like split(), as views into `s` (valid while `s` is).
std::vector<std::string_view> splitView(std::string_view s, char sep);
std::string_view trim(std::string_view s);
// The characters a regex's \s and C's isspace (C locale) match: space, \t, \n, \v, \f, \r.
constexpr bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
std::string toLower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Appends code point `cp` (at most 0x10FFFF; the caller has replaced surrogates) as UTF-8.
void appendUtf8(std::string& out, uint32_t cp);
// Levenshtein distance, for "did you mean".
size_t editDistance(std::string_view a, std::string_view b);
// Parses a non-negative decimal integer that fits in uint64; no sign, no spaces.
std::optional<uint64_t> parseUint(std::string_view s);
// Human-readable byte count: "12.3 MiB".
std::string humanBytes(uint64_t n);
// The current time as an RFC 3339 UTC timestamp: "2026-11-29T20:10:05Z".
std::string utcTimestamp();
// Makes arbitrary bytes safe to print on one line (control characters escaped, length capped).
std::string printable(std::string_view s, size_t max = 200);

}  // namespace kernodeck::util
