// See pylock.h. The TOML reader is a recursive descent over one logical line at a time
// (an array may continue over lines); the table a key lands in is tracked as a JSON pointer.
#include "kernodeck/record/pylock.h"

#include <cstring>
#include <regex>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;

namespace {

struct TomlParser {
  std::string_view s;
  size_t i = 0;
  int line = 1;
  std::string error;

  bool fail(const std::string& why) {
    if (error.empty()) error = "line " + std::to_string(line) + ": " + why;
    return false;
  }
  bool atEnd() const { return i >= s.size(); }
  char peek() const { return atEnd() ? '\0' : s[i]; }
  void spaces() {
    while (!atEnd() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  // Spaces, newlines and comments (inside arrays).
  void blank() {
    for (;;) {
      spaces();
      if (peek() == '#')
        while (!atEnd() && s[i] != '\n') ++i;
      if (peek() == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      if (peek() != '\n') return;
      ++i, ++line;
    }
  }
  // The end of a line: spaces, an optional comment, a newline or the end.
  bool endOfLine() {
    spaces();
    if (peek() == '#')
      while (!atEnd() && s[i] != '\n') ++i;
    if (peek() == '\r') ++i;
    if (atEnd()) return true;
    if (s[i] != '\n') return fail("unexpected '" + util::printable(std::string(1, s[i])) + "' after a value");
    ++i, ++line;
    return true;
  }

  bool basicString(std::string& out) {
    ++i;  // "
    if (s.substr(i, 2) == "\"\"") return fail("multi-line strings are not read");
    while (!atEnd() && s[i] != '"') {
      char c = s[i++];
      if (c == '\n') return fail("a string does not end on its line");
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return fail("a control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (atEnd()) break;
      char e = s[i++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u':
        case 'U': {
          size_t n = e == 'u' ? 4 : 8;
          if (i + n > s.size()) return fail("a short \\u escape");
          unsigned long cp = 0;
          for (size_t k = 0; k < n; ++k) {
            char h = s[i + k];
            if (!std::isxdigit(static_cast<unsigned char>(h))) return fail("a bad \\u escape");
            cp = cp * 16 + static_cast<unsigned long>(
                               std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
          }
          i += n;
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return fail("an escape that is not a character");
          if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: return fail("an unknown escape \\" + util::printable(std::string(1, e)));
      }
    }
    if (atEnd()) return fail("a string does not end");
    ++i;
    return true;
  }
  bool literalString(std::string& out) {
    ++i;  // '
    if (s.substr(i, 2) == "''") return fail("multi-line strings are not read");
    while (!atEnd() && s[i] != '\'') {
      if (s[i] == '\n') return fail("a string does not end on its line");
      out.push_back(s[i++]);
    }
    if (atEnd()) return fail("a string does not end");
    ++i;
    return true;
  }
  bool key(std::vector<std::string>& parts) {
    for (;;) {
      spaces();
      std::string k;
      if (peek() == '"') {
        if (!basicString(k)) return false;
      } else if (peek() == '\'') {
        if (!literalString(k)) return false;
      } else {
        while (!atEnd() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '-')) k += s[i++];
        if (k.empty()) return fail("a key was expected");
      }
      parts.push_back(k);
      spaces();
      if (peek() != '.') return true;
      ++i;
    }
  }
  bool value(json& out, int depth) {
    if (depth > 32) return fail("values nested too deep");
    spaces();
    char c = peek();
    if (c == '"' || c == '\'') {
      std::string str;
      if (!(c == '"' ? basicString(str) : literalString(str))) return false;
      out = str;
      return true;
    }
    if (c == '[') {
      ++i;
      out = json::array();
      for (;;) {
        blank();
        if (peek() == ']') break;
        json v;
        if (!value(v, depth + 1)) return false;
        out.push_back(std::move(v));
        blank();
        if (peek() == ',') {
          ++i;
          continue;
        }
        if (peek() != ']') return fail("',' or ']' expected in an array");
        break;
      }
      ++i;
      return true;
    }
    if (c == '{') {
      ++i;
      out = json::object();
      spaces();
      if (peek() == '}') return ++i, true;
      for (;;) {
        std::vector<std::string> k;
        if (!key(k)) return false;
        if (peek() != '=') return fail("'=' expected in an inline table");
        ++i;
        json v;
        if (!value(v, depth + 1) || !assign(out, k, std::move(v))) return false;
        spaces();
        if (peek() == ',') {
          ++i;
          continue;
        }
        if (peek() != '}') return fail("',' or '}' expected in an inline table");
        ++i;
        return true;
      }
    }
    // A bare word: a boolean, an integer or a date-time (kept as its text).
    std::string w;
    while (!atEnd() && !std::strchr(" \t\r\n,]}#", s[i])) w += s[i++];
    static const std::regex integer(R"([+-]?(0|[1-9](_?[0-9])*))"),
        datetime(
            R"([0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})?)?)");
    if (w == "true" || w == "false") {
      out = w == "true";
    } else if (std::regex_match(w, integer) && w.size() < 19) {
      std::string digits;
      for (char d : w)
        if (d != '_') digits += d;
      out = std::stoll(digits);
    } else if (std::regex_match(w, datetime)) {
      out = w;
    } else {
      return fail(w.empty() ? "a value was expected" : "'" + util::printable(w, 40) + "' is not a value read here");
    }
    return true;
  }
  // Sets `k` (dotted) in `table`; defining a key twice is an error.
  bool assign(json& table, const std::vector<std::string>& k, json v) {
    json* t = &table;
    for (size_t n = 0; n + 1 < k.size(); ++n) {
      json& next = (*t)[k[n]];
      if (next.is_null()) next = json::object();
      if (!next.is_object()) return fail("'" + util::printable(k[n], 60) + "' is not a table");
      t = &next;
    }
    if (t->contains(k.back())) return fail("'" + util::printable(k.back(), 60) + "' is defined twice");
    (*t)[k.back()] = std::move(v);
    return true;
  }
  // The table a [header] or [[header]] names, made as needed; an array of tables' last element.
  json* table(json& root, const std::vector<std::string>& path, bool arrayOfTables) {
    json* t = &root;
    for (size_t n = 0; n < path.size(); ++n) {
      bool last = n + 1 == path.size();
      json& next = (*t)[path[n]];
      if (last && arrayOfTables) {
        if (next.is_null()) next = json::array();
        if (!next.is_array()) return fail("'" + util::printable(path[n], 60) + "' is not an array of tables"), nullptr;
        next.push_back(json::object());
        return &next.back();
      }
      if (next.is_null()) next = json::object();
      if (next.is_array() && !next.empty() && next.back().is_object()) {
        t = &next.back();
        continue;
      }
      if (!next.is_object()) return fail("'" + util::printable(path[n], 60) + "' is not a table"), nullptr;
      t = &next;
    }
    return t;
  }

  bool document(json& root) {
    root = json::object();
    json* current = &root;
    for (;;) {
      blank();
      if (atEnd()) return true;
      if (peek() == '[') {
        bool aot = s.substr(i, 2) == "[[";
        i += aot ? 2 : 1;
        std::vector<std::string> path;
        if (!key(path)) return false;
        if (s.substr(i, aot ? 2 : 1) != (aot ? "]]" : "]")) return fail("a table header does not end");
        i += aot ? 2 : 1;
        current = table(root, path, aot);
        if (!current || !endOfLine()) return false;
        continue;
      }
      std::vector<std::string> k;
      if (!key(k)) return false;
      if (peek() != '=') return fail("'=' expected after a key");
      ++i;
      json v;
      if (!value(v, 0) || !assign(*current, k, std::move(v)) || !endOfLine()) return false;
    }
  }
};

std::string str(const json& j, const char* k) {
  return j.contains(k) && j.at(k).is_string() ? j.at(k).get<std::string>() : "";
}

}  // namespace

Result<json> parseTomlSubset(std::string_view text) {
  if (text.size() > (16u << 20)) return Error::Corrupt("larger than 16 MiB");
  TomlParser p;
  p.s = text;
  json root;
  if (!p.document(root)) return Error::Corrupt(p.error);
  return root;
}

bool wheelNameVersion(const std::string& file, std::string& name, std::string& version) {
  static const std::regex whl(
      R"(([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([0-9][A-Za-z0-9.!+_]*)(-[0-9][^-]*)?-[^-]+-[^-]+-[^-]+\.whl)");
  std::smatch m;
  if (!std::regex_match(file, m, whl)) return false;
  name = m[1].str(), version = m[2].str();
  return true;
}

Result<Lock> parsePylock(std::string_view text) {
  KDK_TRY_ASSIGN(json doc, parseTomlSubset(text));
  Lock lock;
  lock.lockVersion = str(doc, "lock-version");
  if (lock.lockVersion.empty() || !lock.lockVersion.starts_with("1."))
    return Error::Corrupt("lock-version is '" + util::printable(lock.lockVersion, 20) + "', not 1.x");
  if (doc.contains("packages") && !doc.at("packages").is_array()) return Error::Corrupt("packages is not an array");
  static const std::regex hex(R"([0-9a-f]{64})");
  for (const auto& p : doc.value("packages", json::array())) {
    LockedPackage pkg;
    pkg.name = str(p, "name"), pkg.version = str(p, "version");
    if (pkg.name.empty() || !std::regex_match(pkg.name, std::regex(R"([A-Za-z0-9][A-Za-z0-9._-]*)")))
      return Error::Corrupt("a package has no name, or not a plain one");
    if (pkg.version.empty()) return Error::Corrupt("package " + pkg.name + " has no version: a lock pins each");
    if (p.contains("wheels") && !p.at("wheels").is_array())
      return Error::Corrupt(pkg.name + ": wheels is not an array");
    for (const auto& w : p.value("wheels", json::array())) {
      LockedWheel lw;
      lw.path = str(w, "path");
      std::string url = str(w, "url");
      lw.name = str(w, "name");
      if (lw.name.empty())
        lw.name = (lw.path.empty() ? url : lw.path).substr((lw.path.empty() ? url : lw.path).rfind('/') + 1);
      if (w.contains("hashes") && w.at("hashes").is_object()) lw.sha256 = str(w.at("hashes"), "sha256");
      if (!std::regex_match(lw.sha256, hex))
        return Error::Corrupt(pkg.name + ": wheel " + util::printable(lw.name, 120) + " has no sha256 hash");
      std::string n, v;
      if (!wheelNameVersion(lw.name, n, v))
        return Error::Corrupt(pkg.name + ": '" + util::printable(lw.name, 120) + "' is not a wheel's file name");
      pkg.wheels.push_back(lw);
    }
    pkg.sdistOnly = pkg.wheels.empty() &&
                    (p.contains("sdist") || p.contains("archive") || p.contains("vcs") || p.contains("directory"));
    if (pkg.wheels.empty() && !pkg.sdistOnly) return Error::Corrupt(pkg.name + " has no distribution in the lock");
    lock.packages.push_back(std::move(pkg));
  }
  return lock;
}

std::string writePylock(const Lock& lock) {
  // A JSON string is a TOML basic string (bytes that are not UTF-8 replaced rather than thrown on).
  auto q = [](const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string out = "lock-version = \"1.0\"\ncreated-by = \"kernodeck\"\n";
  for (const auto& p : lock.packages) {
    out += "\n[[packages]]\nname = " + q(p.name) + "\nversion = " + q(p.version) + "\n";
    for (const auto& w : p.wheels)
      out += "\n[[packages.wheels]]\nname = " + q(w.name) + "\npath = " + q(w.path) +
             "\nhashes = { sha256 = " + q(w.sha256) + " }\n";
  }
  return out;
}

std::string lockRequirements(const Lock& lock) {
  std::string out = "# from pylock.toml: every distribution pinned by its sha256\n";
  for (const auto& p : lock.packages) {
    out += p.name + "==" + p.version;
    for (const auto& w : p.wheels) out += " \\\n    --hash=sha256:" + w.sha256;
    out += "\n";
  }
  return out;
}

}  // namespace kernodeck::record
