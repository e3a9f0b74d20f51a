#include "kernodeck/gpu/requirement.h"

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::gpu {

namespace {

bool isKnownProperty(std::string_view p) { return p == "cuda" || p == "driver" || p == "arch" || p == "brand"; }

bool validVersion(std::string_view v) {
  if (v.empty()) return false;
  for (const auto& part : util::split(v, '.'))
    if (!util::parseUint(part)) return false;
  return true;
}

Result<std::optional<Condition>> parseCondition(std::string_view s) {
  size_t end = s.find_first_of("<>=!");
  if (end == std::string_view::npos)
    return Error::Invalid("invalid constraint '" + util::printable(s, 80) + "': no operator");
  Condition c;
  c.property = util::toLower(s.substr(0, end));
  std::string_view rest = s.substr(end);
  for (const char* op : {"!=", "<=", ">=", "=", "<", ">"})
    if (rest.substr(0, std::string_view(op).size()) == op) {
      c.op = op;
      break;
    }
  if (c.op.empty()) return Error::Invalid("invalid constraint '" + util::printable(s, 80) + "': bad operator");
  c.value = std::string(rest.substr(c.op.size()));
  if (!isKnownProperty(c.property)) return std::optional<Condition>();  // ignored, as the toolkit does
  if (c.property != "brand" && !validVersion(c.value))
    return Error::Invalid("invalid constraint '" + util::printable(s, 80) + "': " + c.property + " needs a version");
  return std::optional<Condition>(c);
}

Tri evalCondition(const Condition& c, const Properties& p) {
  const std::string& have = c.property == "cuda"     ? p.cuda
                            : c.property == "driver" ? p.driver
                            : c.property == "arch"   ? p.arch
                                                     : p.brand;
  if (have.empty()) return Tri::Unknown;
  int cmp =
      c.property == "brand" ? util::toLower(have).compare(util::toLower(c.value)) : compareVersions(have, c.value);
  cmp = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
  bool ok = (c.op == "=" && cmp == 0) || (c.op == "!=" && cmp != 0) || (c.op == "<" && cmp < 0) ||
            (c.op == "<=" && cmp <= 0) || (c.op == ">" && cmp > 0) || (c.op == ">=" && cmp >= 0);
  return ok ? Tri::True : Tri::False;
}

}  // namespace

Result<Requirement> parseRequirement(std::string_view text) {
  Requirement r;
  r.text = std::string(text);
  for (const auto& term : util::split(text, ' ')) {
    if (util::trim(term).empty()) continue;
    std::vector<Condition> factors;
    for (const auto& factor : util::split(term, ',')) {
      if (util::trim(factor).empty()) continue;
      KDK_TRY_ASSIGN(auto c, parseCondition(util::trim(factor)));
      if (c) factors.push_back(*c);
    }
    if (!factors.empty()) r.terms.push_back(std::move(factors));
  }
  return r;
}

Tri evaluate(const Requirement& r, const Properties& p, std::string* why, std::vector<Condition>* failedOut) {
  if (r.terms.empty()) return Tri::True;
  bool unknown = false;
  std::string failed;
  std::vector<Condition> failedConds;
  for (const auto& term : r.terms) {
    Tri t = Tri::True;
    for (const auto& c : term) {
      Tri v = evalCondition(c, p);
      if (v == Tri::False) {
        t = Tri::False;
        if (!failed.empty()) failed += ", ";
        failed += c.str();
        failedConds.push_back(c);
        break;
      }
      if (v == Tri::Unknown) t = Tri::Unknown;
    }
    if (t == Tri::True) return Tri::True;
    if (t == Tri::Unknown) unknown = true;
  }
  if (why) *why = unknown ? "depends on properties the host does not expose" : "unsatisfied: " + failed;
  if (failedOut && !unknown) *failedOut = std::move(failedConds);
  return unknown ? Tri::Unknown : Tri::False;
}

std::optional<bool> parseGoBool(std::string_view s) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"})
    if (s == t) return true;
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"})
    if (s == f) return false;
  return std::nullopt;
}

bool isLegacyCudaImage(const std::map<std::string, std::string>& env) {
  auto cv = env.find("CUDA_VERSION");
  auto rc = env.find("NVIDIA_REQUIRE_CUDA");
  return cv != env.end() && !cv->second.empty() && (rc == env.end() || rc->second.empty());
}

ContainerRequirements requirementsFromEnv(const std::map<std::string, std::string>& env) {
  ContainerRequirements out;
  auto dis = env.find("NVIDIA_DISABLE_REQUIRE");
  if (dis != env.end()) {
    std::optional<bool> v = parseGoBool(dis->second);
    if (v && *v) {
      out.disabled = true;
      return out;
    }
    if (!v)
      out.ignored.push_back(
          "NVIDIA_DISABLE_REQUIRE=" + util::printable(dis->second, 40) +
          " is not a boolean the toolkit reads (1, t, true, TRUE, True, 0, f, false...), so it counts as false: "
          "the requirements are checked");
  }
  if (env.count("NVIDIA_DISABLE_REQUIRES") && dis == env.end())
    out.ignored.push_back(
        "NVIDIA_DISABLE_REQUIRES is set, but the toolkit reads NVIDIA_DISABLE_REQUIRE (no S): "
        "the requirements are checked");
  for (const auto& [k, v] : env) {
    if (!k.starts_with("NVIDIA_REQUIRE_") || k.starts_with("NVIDIA_REQUIRE_JETPACK")) continue;
    auto r = parseRequirement(v);
    if (r.ok()) {
      r->source = k;
      out.requirements.push_back(*r);
    } else {
      out.errors.push_back(k + ": " + r.error().message);
    }
  }
  if (isLegacyCudaImage(env)) {
    out.legacy = true;
    const std::string& cv = env.at("CUDA_VERSION");
    auto r = parseRequirement("cuda>=" + majorMinor(cv));
    if (r.ok() && util::parseUint(util::split(cv, '.')[0])) {
      r->source = "CUDA_VERSION";
      out.requirements.push_back(*r);
    } else {
      out.errors.push_back("CUDA_VERSION: '" + util::printable(cv, 40) +
                           "' is not a version (the toolkit refuses such a legacy image)");
    }
  }
  return out;
}

bool VisibleDevices::requestsMig() const {
  for (const auto& id : ids)
    if (id.rfind("MIG-", 0) == 0 || id.find(':') != std::string::npos) return true;
  return false;
}

VisibleDevices parseVisibleDevices(const std::optional<std::string>& value) {
  VisibleDevices v;
  if (!value) return v;
  std::string s(util::trim(*value));
  if (s.empty() || s == "void") {
    v.kind = VisibleDevices::Void;
    return v;
  }
  if (s == "none") {
    v.kind = VisibleDevices::None;
    return v;
  }
  if (s == "all") {
    v.kind = VisibleDevices::All;
    return v;
  }
  v.kind = VisibleDevices::List;
  for (const auto& id : util::split(s, ','))
    if (!util::trim(id).empty()) v.ids.emplace_back(util::trim(id));
  return v;
}

std::vector<std::string> parseDriverCapabilities(const std::optional<std::string>& value) {
  if (!value || util::trim(*value).empty()) return {"compute", "utility"};
  std::vector<std::string> out;
  for (const auto& c : util::split(*value, ',')) {
    std::string cap = util::toLower(util::trim(c));
    if (cap == "all") return {"compute", "compat32", "graphics", "utility", "video", "display"};
    if (!cap.empty()) out.push_back(cap);
  }
  return out;
}

}  // namespace kernodeck::gpu
