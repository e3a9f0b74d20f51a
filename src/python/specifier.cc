// Follows packaging.specifiers (the version pip vendors): the comparison
// rules for each operator, wildcard padding, and pre-release handling.
#include "kernodeck/python/specifier.h"

#include <cctype>
#include <regex>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

bool isDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// packaging's _version_split: epoch first, then release parts, pre-release split off.
std::vector<std::string> versionSplit(const std::string& v) {
  std::vector<std::string> out;
  std::string rest = v;
  size_t bang = v.find('!');
  if (bang != std::string::npos) {
    out.push_back(v.substr(0, bang));
    rest = v.substr(bang + 1);
  } else {
    out.push_back("0");
  }
  static const std::regex prefix(R"(^([0-9]+)((?:a|b|c|rc)[0-9]+)$)");
  for (const auto& item : util::split(rest, '.')) {
    std::smatch m;
    if (item.size() <= 64 && std::regex_match(item, m, prefix)) {  // bounded: an image's text
      out.push_back(m[1].str());
      out.push_back(m[2].str());
    } else {
      out.push_back(item);
    }
  }
  return out;
}

// Pads the numeric prefix of `left` with zeros to the length of `right`'s.
std::vector<std::string> padLeft(const std::vector<std::string>& left, const std::vector<std::string>& right) {
  auto numericLen = [](const std::vector<std::string>& v) {
    size_t n = 0;
    while (n < v.size() && isDigits(v[n])) ++n;
    return n;
  };
  size_t ln = numericLen(left), rn = numericLen(right);
  std::vector<std::string> out(left.begin(), left.begin() + static_cast<long>(ln));
  for (size_t i = ln; i < rn; ++i) out.push_back("0");
  out.insert(out.end(), left.begin() + static_cast<long>(ln), left.end());
  return out;
}

// canonicalize_version(v, strip_trailing_zero=False) for a valid version.
std::string canonicalNoStrip(const Version& v) { return v.str(); }

}  // namespace

Result<Specifier> Specifier::parse(std::string_view raw) {
  std::string s(util::trim(raw));
  Specifier sp;
  for (const char* op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">"}) {
    if (s.rfind(op, 0) == 0) {
      sp.op_ = op;
      break;
    }
  }
  if (sp.op_.empty()) return Error::Invalid("invalid specifier '" + util::printable(s, 80) + "': no operator");
  sp.version_ = std::string(util::trim(std::string_view(s).substr(sp.op_.size())));
  auto bad = [&](const std::string& why) {
    return Error::Invalid("invalid specifier '" + util::printable(s, 80) + "': " + why);
  };
  if (sp.version_.empty()) return bad("no version");
  if (sp.op_ == "===") {
    if (sp.version_.find_first_of(" \t,;") != std::string::npos) return bad("bad arbitrary version");
    return sp;
  }
  bool wildcard = sp.version_.size() > 2 && sp.version_.substr(sp.version_.size() - 2) == ".*";
  if (wildcard && sp.op_ != "==" && sp.op_ != "!=") return bad("a wildcard needs == or !=");
  auto v = Version::parse(wildcard ? sp.version_.substr(0, sp.version_.size() - 2) : sp.version_);
  if (!v.ok()) return bad("bad version");
  // ".*" follows the release segments only: never a pre, post, dev or local part.
  if (wildcard && (v->isPrerelease() || v->isPostrelease() || v->hasLocal()))
    return bad("a wildcard can only follow the release segments");
  if (v->hasLocal() && sp.op_ != "==" && sp.op_ != "!=") return bad("local versions need == or !=");
  if (sp.op_ == "~=" && v->release().size() < 2) return bad("~= needs at least two release segments");
  if (sp.op_ == "~=" && v->hasLocal()) return bad("~= cannot take a local version");
  return sp;
}

bool Specifier::prereleases() const {
  if (op_ == "!=") return false;
  std::string v = version_;
  if (op_ == "==" && v.size() > 2 && v.substr(v.size() - 2) == ".*") v = v.substr(0, v.size() - 2);
  auto pv = Version::parse(v);
  return pv.ok() && pv->isPrerelease();
}

bool Specifier::containsString(std::string_view raw) const {
  return op_ == "===" && util::toLower(raw) == util::toLower(version_);
}

bool Specifier::contains(const Version& item, std::optional<bool> pre) const {
  bool allowPre = pre ? *pre : prereleases();
  if (item.isPrerelease() && !allowPre) return false;
  if (op_ == "===") return containsString(item.str());
  bool wildcard = version_.size() > 2 && version_.substr(version_.size() - 2) == ".*";
  auto equalTo = [&](const std::string& specText, bool wild) {
    if (wild) {
      auto sv = Version::parse(specText);
      if (!sv.ok()) return false;
      auto splitSpec = versionSplit(canonicalNoStrip(*sv));
      auto splitItem = padLeft(versionSplit(canonicalNoStrip(item.publicVersion())), splitSpec);
      if (splitItem.size() < splitSpec.size()) return false;
      return std::equal(splitSpec.begin(), splitSpec.end(), splitItem.begin());
    }
    auto sv = Version::parse(specText);
    if (!sv.ok()) return false;
    if (!sv->hasLocal()) return item.publicVersion() == *sv;
    return item == *sv;
  };
  std::string specText = wildcard ? version_.substr(0, version_.size() - 2) : version_;
  if (op_ == "==") return equalTo(specText, wildcard);
  if (op_ == "!=") return !equalTo(specText, wildcard);
  auto spec = Version::parse(specText);
  if (!spec.ok()) return false;
  if (op_ == "<=") return item.publicVersion() <= *spec;
  if (op_ == ">=") return item.publicVersion() >= *spec;
  // packaging 26's ranges (src/packaging/_ranges.py, standard_ranges), which follow PEP 440's text.
  if (op_ == "<") {
    // <V excludes the pre-releases of V when V is not one itself: V.dev0 is the earliest of them.
    if (spec->isPrerelease()) return item < *spec;
    auto bound = Version::parse(spec->publicStr() + ".dev0");
    return bound.ok() && item < *bound;
  }
  if (op_ == ">") {
    if (!(item > *spec)) return false;
    // PEP 440: ">V MUST NOT match a local version of the specified version", one whose public
    // part is V (packaging 26.1 fixed this; it had compared base versions).
    if (item.publicVersion() == *spec) return false;
    // Nor a post-release of V itself, when V is a final or pre-release: >1.0b1 excludes
    // 1.0b1.post1 but not 1.0b2.post345, and >1.0b1.dev456 excludes no post-release at all
    // (older packaging compared base versions and excluded every 1.0*.postN).
    if (!spec->dev() && !spec->post() && item.post() && item.epoch() == spec->epoch() && item.pre() == spec->pre() &&
        item.baseVersion() == spec->baseVersion())
      return false;
    return true;
  }
  if (op_ == "~=") {
    std::vector<std::string> parts;
    for (size_t i = 0; i + 1 < spec->release().size(); ++i) parts.push_back(std::to_string(spec->release()[i]));
    std::string prefix = (spec->epoch() ? std::to_string(spec->epoch()) + "!" : "") + util::join(parts, ".");
    return item.publicVersion() >= *spec && equalTo(prefix, true);
  }
  return false;
}

Result<SpecifierSet> SpecifierSet::parse(std::string_view s) {
  SpecifierSet set;
  for (const auto& part : util::split(s, ',')) {
    if (util::trim(part).empty()) continue;
    KDK_TRY_ASSIGN(Specifier sp, Specifier::parse(part));
    set.specs_.push_back(sp);
  }
  return set;
}

std::string SpecifierSet::str() const {
  std::vector<std::string> parts;
  for (const auto& s : specs_) parts.push_back(s.str());
  std::sort(parts.begin(), parts.end());
  return util::join(parts, ",");
}

bool SpecifierSet::contains(const Version& v, std::optional<bool> pre) const {
  bool allow = false;
  if (pre)
    allow = *pre;
  else
    for (const auto& s : specs_) allow |= s.prereleases();
  if (!allow && v.isPrerelease()) return false;
  for (const auto& s : specs_)
    if (!s.contains(v, allow)) return false;
  return true;
}

}  // namespace kernodeck::python
