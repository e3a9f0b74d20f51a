// A small recursive-descent parser for the marker grammar of PEP 508, and an
// evaluator that follows packaging.markers: version comparisons when both
// sides parse as versions (pre-releases allowed), string comparisons otherwise.
#include "kernodeck/python/marker.h"

#include <cctype>
#include <optional>
#include <vector>

#include "kernodeck/python/specifier.h"
#include "kernodeck/python/version.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

struct Marker::Node {
  enum Kind { And, Or, Compare } kind = Compare;
  std::shared_ptr<const Node> left, right;
  // Compare: each side is a variable name or a literal.
  bool lhsVar = false, rhsVar = false;
  std::string lhs, op, rhs;
};

namespace {

// A quoted string's content as Python's ast.literal_eval reads it (packaging evaluates marker
// strings so): backslash escapes decoded; a backslash before the closing quote, an unknown
// \x/\u/\U/\N form or a code point out of range is invalid. Unknown escapes (\d) stay as written.
std::optional<std::string> unescapePython(std::string_view in) {
  std::string out;
  auto hex = [&](size_t at, size_t n) -> std::optional<uint32_t> {
    if (at + n > in.size()) return std::nullopt;
    uint32_t v = 0;
    for (size_t k = at; k < at + n; ++k) {
      char c = in[k];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\') {
      out.push_back(in[i]);
      continue;
    }
    if (++i >= in.size()) return std::nullopt;  // it escaped the closing quote
    char c = in[i];
    switch (c) {
      case '\n': break;
      case '\\':
      case '\'':
      case '"': out.push_back(c); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case 'x':
      case 'u':
      case 'U': {
        size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        auto v = hex(i + 1, n);
        if (!v || *v > 0x10ffff) return std::nullopt;
        util::appendUtf8(out, *v);
        i += n;
        break;
      }
      case 'N': return std::nullopt;  // named characters: not needed by any marker value
      default:
        if (c >= '0' && c <= '7') {
          uint32_t v = 0;
          size_t k = 0;
          for (; k < 3 && i + k < in.size() && in[i + k] >= '0' && in[i + k] <= '7'; ++k)
            v = v * 8 + static_cast<uint32_t>(in[i + k] - '0');
          util::appendUtf8(out, v);
          i += k - 1;
        } else {
          out.push_back('\\');
          out.push_back(c);
        }
    }
  }
  return out;
}

const char* kVariables[] = {"python_version", "python_full_version", "os_name", "sys_platform", "platform_release",
                            "platform_system", "platform_version", "platform_machine", "platform_python_implementation",
                            "implementation_name", "implementation_version", "extra",
                            // PEP 751's sets, in a lock's markers only (`'gpu' in extras`)
                            "extras", "dependency_groups",
                            // legacy spellings, normalised below
                            "os.name", "sys.platform", "platform.version", "platform.machine",
                            "platform.python_implementation", "python_implementation"};

std::string canonicalVar(const std::string& v) {
  if (v == "os.name") return "os_name";
  if (v == "sys.platform") return "sys_platform";
  if (v == "platform.version") return "platform_version";
  if (v == "platform.machine") return "platform_machine";
  if (v == "platform.python_implementation" || v == "python_implementation") return "platform_python_implementation";
  return v;
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<std::shared_ptr<const Marker::Node>> parse() {
    auto n = parseOr(0);
    if (!n.ok()) return n;
    skipWs();
    if (pos_ != s_.size()) return err("unexpected text");
    return n;
  }

 private:
  using NodeP = std::shared_ptr<const Marker::Node>;

  Error err(const std::string& what) {
    return Error::Invalid("invalid marker '" + util::printable(s_, 120) + "': " + what + " at position " +
                          std::to_string(pos_));
  }
  void skipWs() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool keyword(std::string_view k) {
    skipWs();
    if (s_.substr(pos_, k.size()) != k) return false;
    size_t end = pos_ + k.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    pos_ = end;
    return true;
  }

  // operand (keyword operand)*, left-associative.
  template <typename Operand>
  Result<NodeP> parseChain(std::string_view op, Marker::Node::Kind kind, Operand operand) {
    KDK_TRY_ASSIGN(NodeP left, operand());
    while (keyword(op)) {
      KDK_TRY_ASSIGN(NodeP right, operand());
      auto n = std::make_shared<Marker::Node>();
      n->kind = kind;
      n->left = left;
      n->right = right;
      left = n;
    }
    return left;
  }

  Result<NodeP> parseOr(int depth) {
    if (depth > 64) return err("nested too deeply");
    return parseChain("or", Marker::Node::Or, [&] { return parseAnd(depth); });
  }

  Result<NodeP> parseAnd(int depth) {
    return parseChain("and", Marker::Node::And, [&] { return parseAtom(depth); });
  }

  Result<NodeP> parseAtom(int depth) {
    skipWs();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      KDK_TRY_ASSIGN(NodeP inner, parseOr(depth + 1));
      skipWs();
      if (pos_ >= s_.size() || s_[pos_] != ')') return err("expected ')'");
      ++pos_;
      return inner;
    }
    auto n = std::make_shared<Marker::Node>();
    KDK_TRY_STATUS(parseValue(n->lhs, n->lhsVar));
    KDK_TRY_STATUS(parseOp(n->op));
    KDK_TRY_STATUS(parseValue(n->rhs, n->rhsVar));
    if (!n->lhsVar && !n->rhsVar) return err("a comparison needs a marker variable");
    return NodeP(n);
  }

  Status parseValue(std::string& out, bool& isVar) {
    skipWs();
    if (pos_ >= s_.size()) return err("expected a value");
    char q = s_[pos_];
    if (q == '\'' || q == '"') {
      size_t end = s_.find(q, pos_ + 1);
      if (end == std::string_view::npos) return err("unterminated string");
      auto value = unescapePython(s_.substr(pos_ + 1, end - pos_ - 1));
      if (!value) return err("invalid quoted string");
      out = std::move(*value);
      pos_ = end + 1;
      isVar = false;
      return {};
    }
    for (const char* v : kVariables)
      if (keyword(v)) {
        out = canonicalVar(v);
        isVar = true;
        return {};
      }
    return err("expected a marker variable or a quoted string");
  }

  Status parseOp(std::string& out) {
    skipWs();
    for (const char* op : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"})
      if (s_.substr(pos_, std::string_view(op).size()) == op) {
        out = op;
        pos_ += out.size();
        return {};
      }
    if (keyword("in")) {
      out = "in";
      return {};
    }
    if (keyword("not")) {
      if (!keyword("in")) return err("expected 'in' after 'not'");
      out = "not in";
      return {};
    }
    return err("expected an operator");
  }

  std::string_view s_;
  size_t pos_ = 0;
};

std::string normalizeExtra(std::string_view e) { return canonicalizeName(e); }

Tri compareValues(const std::string& op, const std::string& lhs, const std::string& rhs) {
  if (op == "in") return rhs.find(lhs) != std::string::npos ? Tri::True : Tri::False;
  if (op == "not in") return rhs.find(lhs) == std::string::npos ? Tri::True : Tri::False;
  // Version comparison when the right side is a valid specifier for the left side's version.
  auto spec = Specifier::parse(op + rhs);
  auto ver = Version::parse(lhs);
  if (spec.ok() && ver.ok()) return spec->contains(*ver, true) ? Tri::True : Tri::False;
  if (op == "==") return lhs == rhs ? Tri::True : Tri::False;
  if (op == "!=") return lhs != rhs ? Tri::True : Tri::False;
  if (op == "<") return lhs < rhs ? Tri::True : Tri::False;
  if (op == "<=") return lhs <= rhs ? Tri::True : Tri::False;
  if (op == ">") return lhs > rhs ? Tri::True : Tri::False;
  if (op == ">=") return lhs >= rhs ? Tri::True : Tri::False;
  if (op == "===") return lhs == rhs ? Tri::True : Tri::False;
  return Tri::False;  // "~=" on non-versions: packaging raises UndefinedComparison
}

Tri eval(const Marker::Node& n, const MarkerEnv& env, std::string_view extra) {
  if (n.kind == Marker::Node::And) {
    Tri l = eval(*n.left, env, extra);
    if (l == Tri::False) return Tri::False;
    Tri r = eval(*n.right, env, extra);
    if (r == Tri::False) return Tri::False;
    return l == Tri::True && r == Tri::True ? Tri::True : Tri::Unknown;
  }
  if (n.kind == Marker::Node::Or) {
    Tri l = eval(*n.left, env, extra);
    if (l == Tri::True) return Tri::True;
    Tri r = eval(*n.right, env, extra);
    if (r == Tri::True) return Tri::True;
    return l == Tri::False && r == Tri::False ? Tri::False : Tri::Unknown;
  }
  auto value = [&](const std::string& s, bool isVar, std::string& out) {
    if (!isVar) {
      out = s;
      return true;
    }
    if (s == "extra") {
      out = std::string(extra);
      return true;
    }
    auto it = env.find(s);
    if (it == env.end()) return false;
    out = it->second;
    return true;
  };
  // PEP 751's `extras` and `dependency_groups` are sets of names: the environment holds them
  // normalised and joined with commas; a name is tested for membership, nothing else.
  bool setLhs = n.lhsVar && (n.lhs == "extras" || n.lhs == "dependency_groups");
  bool setRhs = n.rhsVar && (n.rhs == "extras" || n.rhs == "dependency_groups");
  if (setLhs || setRhs) {
    auto it = env.find(n.rhs);
    if (setLhs || n.lhsVar || (n.op != "in" && n.op != "not in") || it == env.end()) return Tri::Unknown;
    bool has = false;
    for (const auto& name : util::split(it->second, ','))
      if (!name.empty() && name == canonicalizeName(n.lhs)) has = true;
    return has == (n.op == "in") ? Tri::True : Tri::False;
  }
  std::string l, r;
  if (!value(n.lhs, n.lhsVar, l) || !value(n.rhs, n.rhsVar, r)) return Tri::Unknown;
  if ((n.lhsVar && n.lhs == "extra") || (n.rhsVar && n.rhs == "extra")) {
    l = normalizeExtra(l);
    r = normalizeExtra(r);
  }
  return compareValues(n.op, l, r);
}

}  // namespace

MarkerEnv imageMarkerEnv(std::string_view full, std::string_view ociArch, std::string_view impl) {
  MarkerEnv e;
  auto parts = util::split(full, '.');
  e["python_full_version"] = std::string(full);
  e["python_version"] = parts.size() >= 2 ? parts[0] + "." + parts[1] : std::string(full);
  e["os_name"] = "posix";
  e["sys_platform"] = "linux";
  e["platform_system"] = "Linux";
  std::string m = std::string(ociArch);
  if (m == "amd64")
    m = "x86_64";
  else if (m == "arm64")
    m = "aarch64";
  else if (m == "386")
    m = "i686";
  else if (m == "arm")
    m = "armv7l";
  e["platform_machine"] = m;
  e["implementation_name"] = std::string(impl);
  e["platform_python_implementation"] = impl == "pypy" ? "PyPy" : "CPython";
  e["implementation_version"] = std::string(full);
  return e;
}

Result<Marker> Marker::parse(std::string_view s) {
  Parser p(s);
  KDK_TRY_ASSIGN(auto root, p.parse());
  Marker m;
  m.root_ = root;
  m.text_ = std::string(util::trim(s));
  return m;
}

namespace {

std::string canonicalOf(const Marker::Node& n, Marker::Node::Kind parent) {
  if (n.kind != Marker::Node::Compare) {
    std::string s =
        canonicalOf(*n.left, n.kind) + (n.kind == Marker::Node::And ? " and " : " or ") + canonicalOf(*n.right, n.kind);
    return n.kind == Marker::Node::Or && parent == Marker::Node::And ? "(" + s + ")" : s;
  }
  bool extra = (n.lhsVar && n.lhs == "extra") || (n.rhsVar && n.rhs == "extra");
  auto side = [&](const std::string& v, bool isVar) {
    if (isVar) return v;
    std::string value = extra ? canonicalizeName(v) : v;
    return value.find('"') == std::string::npos ? "\"" + value + "\"" : "'" + value + "'";
  };
  return side(n.lhs, n.lhsVar) + " " + n.op + " " + side(n.rhs, n.rhsVar);
}

}  // namespace

std::string Marker::canonical() const { return root_ ? canonicalOf(*root_, Marker::Node::Or) : ""; }

Tri Marker::evaluate(const MarkerEnv& env, std::string_view extra) const {
  if (!root_) return Tri::True;
  return eval(*root_, env, extra);
}

}  // namespace kernodeck::python
