// See time.h.
#include "kernodeck/util/time.h"

#include <chrono>
#include <cstdio>

namespace kernodeck::util {

using namespace std::chrono;

int64_t nowMs() { return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count(); }

std::string utcTimestampMs(int64_t ms) {
  sys_time<milliseconds> t{milliseconds{ms}};
  auto day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss hms{t - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), static_cast<int>(hms.subseconds().count()));
  return buf;
}

namespace {

// Reads exactly `n` digits at `pos` into `out`.
bool digits(std::string_view s, size_t& pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || (s[pos] != c && !(c == 'T' && s[pos] == 't'))) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<int64_t> parseTimestampMs(std::string_view s) {
  size_t p = 0;
  int Y, M, D, h, m, sec;
  if (!digits(s, p, 4, Y) || !expect(s, p, '-') || !digits(s, p, 2, M) || !expect(s, p, '-') || !digits(s, p, 2, D) ||
      !expect(s, p, 'T') || !digits(s, p, 2, h) || !expect(s, p, ':') || !digits(s, p, 2, m) || !expect(s, p, ':') ||
      !digits(s, p, 2, sec))
    return std::nullopt;
  if (Y < 1970 || h > 23 || m > 59 || sec > 60) return std::nullopt;
  year_month_day ymd{year{Y}, month{static_cast<unsigned>(M)}, day{static_cast<unsigned>(D)}};
  if (!ymd.ok()) return std::nullopt;
  int64_t frac = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t start = p;
    int scale = 100;
    for (; p < s.size() && s[p] >= '0' && s[p] <= '9'; ++p, scale /= 10)
      if (scale > 0) frac += (s[p] - '0') * scale;
    if (p == start || p - start > 9) return std::nullopt;
  }
  int64_t offset = 0;  // seconds east of UTC
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    int sign = s[p] == '-' ? -1 : 1, oh, om;
    ++p;
    if (!digits(s, p, 2, oh) || !expect(s, p, ':') || !digits(s, p, 2, om) || oh > 23 || om > 59) return std::nullopt;
    offset = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (p != s.size()) return std::nullopt;
  int64_t secs = sys_days{ymd}.time_since_epoch().count() * 86400LL + h * 3600 + m * 60 + std::min(sec, 59) - offset;
  return secs * 1000 + frac;
}

std::optional<int64_t> parseDurationSeconds(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t total = 0;
  size_t p = 0;
  while (p < s.size()) {
    int64_t n = 0;
    size_t start = p;
    for (; p < s.size() && s[p] >= '0' && s[p] <= '9'; ++p) {
      n = n * 10 + (s[p] - '0');
      if (n > 100LL * 366 * 86400) return std::nullopt;
    }
    if (p == start || p == s.size()) return std::nullopt;
    int64_t unit = s[p] == 's'   ? 1
                   : s[p] == 'm' ? 60
                   : s[p] == 'h' ? 3600
                   : s[p] == 'd' ? 86400
                   : s[p] == 'w' ? 604800
                                 : 0;
    if (!unit) return std::nullopt;
    ++p;
    total += n * unit;
    if (total > 100LL * 366 * 86400) return std::nullopt;
  }
  if (total <= 0) return std::nullopt;
  return total;
}

std::string formatDurationSeconds(int64_t s) {
  if (s > 0 && s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s > 0 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s > 0 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace kernodeck::util
