#include "kernodeck/python/version.h"

#include <cstdint>
#include <regex>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

// packaging.version.VERSION_PATTERN, anchored, case-insensitive.
const std::regex& versionRe() {
  static const std::regex re(R"(^\s*v?(?:(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*))"
                             R"(([-_\.]?(alpha|a|beta|b|preview|pre|c|rc)[-_\.]?([0-9]+)?)?)"
                             R"(((?:-([0-9]+))|(?:[-_\.]?(post|rev|r)[-_\.]?([0-9]+)?))?)"
                             R"(([-_\.]?(dev)[-_\.]?([0-9]+)?)?)"
                             R"((?:\+([a-z0-9]+(?:[-_\.][a-z0-9]+)*))?)\s*$)",
                             std::regex::icase);
  return re;
}

// Strips what Python's str.strip() does: ASCII whitespace and, in UTF-8, the other
// characters Unicode calls white space (U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000), as packaging does before matching a version.
std::string_view stripPythonWhitespace(std::string_view s) {
  auto lead = [](std::string_view t) -> size_t {  // bytes of a white-space character at the start, or 0
    if (t.empty()) return 0;
    unsigned char c = static_cast<unsigned char>(t[0]);
    if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return 1;
    if (t.size() >= 2 && c == 0xc2 &&
        (static_cast<unsigned char>(t[1]) == 0x85 || static_cast<unsigned char>(t[1]) == 0xa0))
      return 2;
    if (t.size() >= 3) {
      unsigned char c1 = static_cast<unsigned char>(t[1]), c2 = static_cast<unsigned char>(t[2]);
      if (c == 0xe1 && c1 == 0x9a && c2 == 0x80) return 3;  // U+1680
      if (c == 0xe2 && c1 == 0x80 && (c2 <= 0x8a || c2 == 0xa8 || c2 == 0xa9 || c2 == 0xaf))
        return 3;                                           // U+2000..200A, 2028, 2029, 202F
      if (c == 0xe2 && c1 == 0x81 && c2 == 0x9f) return 3;  // U+205F
      if (c == 0xe3 && c1 == 0x80 && c2 == 0x80) return 3;  // U+3000
    }
    return 0;
  };
  auto trail = [&](std::string_view t) -> size_t {
    for (size_t k = 1; k <= 3 && k <= t.size(); ++k)
      if (lead(t.substr(t.size() - k)) == k) return k;
    return 0;
  };
  while (size_t k = lead(s)) s.remove_prefix(k);
  while (size_t k = trail(s)) s.remove_suffix(k);
  return s;
}

std::optional<uint64_t> num(const std::ssub_match& m) {
  if (!m.matched || m.length() == 0) return 0;
  return util::parseUint(m.str());
}

}  // namespace

Result<Version> Version::parse(std::string_view sv) {
  if (sv.size() > 512) return Error::Invalid("version is too long");
  std::string s(stripPythonWhitespace(sv));
  std::smatch m;
  if (!std::regex_match(s, m, versionRe())) return Error::Invalid("invalid version '" + util::printable(s, 80) + "'");
  Version v;
  auto bad = [&] { return Error::Invalid("invalid version '" + util::printable(s, 80) + "': number too large"); };
  if (m[1].matched) {
    auto e = util::parseUint(m[1].str());
    if (!e) return bad();
    v.epoch_ = *e;
  }
  for (const auto& part : util::split(m[2].str(), '.')) {
    auto n = util::parseUint(part);
    if (!n) return bad();
    v.release_.push_back(*n);
  }
  if (m[3].matched) {
    std::string l = util::toLower(m[4].str());
    if (l == "alpha")
      l = "a";
    else if (l == "beta")
      l = "b";
    else if (l == "c" || l == "pre" || l == "preview")
      l = "rc";
    auto n = num(m[5]);
    if (!n) return bad();
    v.pre_ = std::make_pair(l, *n);
  }
  if (m[6].matched) {
    auto n = m[7].matched ? num(m[7]) : num(m[9]);
    if (!n) return bad();
    v.post_ = *n;
  }
  if (m[10].matched) {
    auto n = num(m[12]);
    if (!n) return bad();
    v.dev_ = *n;
  }
  if (m[13].matched) {
    std::string l = util::toLower(m[13].str());
    for (char& c : l)
      if (c == '-' || c == '_') c = '.';
    for (const auto& seg : util::split(l, '.')) {
      auto n = util::parseUint(seg);
      if (n)
        v.local_.emplace_back(*n);
      else
        v.local_.emplace_back(seg);
    }
  }
  return v;
}

std::string Version::baseStr() const {
  std::string s = epoch_ ? std::to_string(epoch_) + "!" : "";
  for (size_t i = 0; i < release_.size(); ++i) s += (i ? "." : "") + std::to_string(release_[i]);
  return s;
}

std::string Version::publicStr() const {
  std::string s = baseStr();
  if (pre_) s += pre_->first + std::to_string(pre_->second);
  if (post_) s += ".post" + std::to_string(*post_);
  if (dev_) s += ".dev" + std::to_string(*dev_);
  return s;
}

std::string Version::localStr() const {
  std::string s;
  for (size_t i = 0; i < local_.size(); ++i) {
    if (i) s += ".";
    if (auto* n = std::get_if<uint64_t>(&local_[i]))
      s += std::to_string(*n);
    else
      s += std::get<std::string>(local_[i]);
  }
  return s;
}

std::string Version::str() const {
  std::string s = publicStr();
  if (!local_.empty()) s += "+" + localStr();
  return s;
}

Version Version::publicVersion() const {
  Version v = *this;
  v.local_.clear();
  return v;
}

Version Version::baseVersion() const {
  Version v;
  v.epoch_ = epoch_;
  v.release_ = release_;
  return v;
}

std::strong_ordering Version::operator<=>(const Version& o) const {
  if (auto c = epoch_ <=> o.epoch_; c != 0) return c;
  // Release, trailing zeros ignored.
  auto trimmed = [](const std::vector<uint64_t>& r) {
    size_t n = r.size();
    while (n > 0 && r[n - 1] == 0) --n;
    return std::vector<uint64_t>(r.begin(), r.begin() + static_cast<long>(n));
  };
  if (auto c = trimmed(release_) <=> trimmed(o.release_); c != 0) return c;
  // Pre: a dev-only release sorts before any pre-release; no pre sorts after all of them.
  auto preKey = [](const Version& v) -> std::tuple<int, std::string, uint64_t> {
    if (!v.pre_ && !v.post_ && v.dev_) return {-1, "", 0};
    if (!v.pre_) return {1, "", 0};
    return {0, v.pre_->first, v.pre_->second};
  };
  if (auto c = preKey(*this) <=> preKey(o); c != 0) return c;
  auto postKey = [](const Version& v) -> std::pair<int, uint64_t> {
    return v.post_ ? std::make_pair(1, *v.post_) : std::make_pair(0, uint64_t(0));
  };
  if (auto c = postKey(*this) <=> postKey(o); c != 0) return c;
  auto devKey = [](const Version& v) -> std::pair<int, uint64_t> {
    return v.dev_ ? std::make_pair(0, *v.dev_) : std::make_pair(1, uint64_t(0));
  };
  if (auto c = devKey(*this) <=> devKey(o); c != 0) return c;
  // Local: absent sorts first; numeric segments sort after alphanumeric ones.
  if (local_.empty() != o.local_.empty())
    return local_.empty() ? std::strong_ordering::less : std::strong_ordering::greater;
  for (size_t i = 0; i < std::min(local_.size(), o.local_.size()); ++i) {
    const auto& a = local_[i];
    const auto& b = o.local_[i];
    if (a.index() != b.index()) return a.index() == 0 ? std::strong_ordering::greater : std::strong_ordering::less;
    if (a.index() == 0) {
      if (auto c = std::get<0>(a) <=> std::get<0>(b); c != 0) return c;
    } else {
      int c = std::get<1>(a).compare(std::get<1>(b));
      if (c != 0) return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    }
  }
  return local_.size() <=> o.local_.size();
}

std::string canonicalizeName(std::string_view name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep) out.push_back('-');
    sep = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (sep) out.push_back('-');
  return out;
}

}  // namespace kernodeck::python
