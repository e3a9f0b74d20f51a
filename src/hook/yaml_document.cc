// See yaml_document.h. libyaml's event interface (parser and emitter), walked with an explicit
// stack so that nesting costs no C++ recursion; the limits are checked as each event arrives, so
// hostile input stops at the first place it goes too far.
#include "kernodeck/hook/yaml_document.h"

#include <yaml.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_set>
#include <vector>

#include "kernodeck/util/strings.h"

namespace kernodeck::hook {

using nlohmann::ordered_json;

namespace {

// Plain scalars go-yaml v2 (YAML 1.1) reads as null, bools or the special floats.
bool isNull(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

std::optional<bool> boolOf(std::string_view s) {
  for (const char* t : {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
    if (s == t) return true;
  for (const char* f : {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
    if (s == f) return false;
  return std::nullopt;
}

std::optional<double> specialFloat(std::string_view s) {
  for (const char* n : {".nan", ".NaN", ".NAN"})
    if (s == n) return std::nan("");
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  for (const char* i : {".inf", ".Inf", ".INF"})
    if (body == i) return negative ? -HUGE_VAL : HUGE_VAL;
  return std::nullopt;
}

// An integer as strconv.ParseInt(s, 0, 64) reads it after go-yaml removed the underscores:
// sign, then 0x / 0o / 0b / leading-0 octal / decimal. Too large for 64 bits: nullopt.
std::optional<ordered_json> integerOf(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  unsigned base = 10;
  auto prefixed = [&](char lower) { return s.size() > 2 && s[0] == '0' && (s[1] == lower || s[1] == lower - 32); };
  if (prefixed('x'))
    base = 16, s.remove_prefix(2);
  else if (prefixed('o'))
    base = 8, s.remove_prefix(2);
  else if (prefixed('b'))
    base = 2, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0')
    base = 8, s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    unsigned d = c >= '0' && c <= '9'   ? unsigned(c - '0')
                 : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                 : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                        : 99;
    if (d >= base) return std::nullopt;
    v = v * base + d;
    if (v > (static_cast<unsigned __int128>(1) << 64)) return std::nullopt;
  }
  if (negative) {
    if (v > (static_cast<unsigned __int128>(1) << 63)) return std::nullopt;
    return ordered_json(static_cast<int64_t>(-static_cast<__int128>(v)));
  }
  if (v <= static_cast<unsigned __int128>(INT64_MAX)) return ordered_json(static_cast<int64_t>(v));
  if (v <= static_cast<unsigned __int128>(UINT64_MAX)) return ordered_json(static_cast<uint64_t>(v));
  return std::nullopt;
}

// go-yaml's float syntax: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
std::optional<double> floatOf(const std::string& s) {
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < n && s[i] == '.') {
    ++i;
    if (!digits()) return std::nullopt;
  } else {
    if (!digits()) return std::nullopt;
    if (i < n && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return std::nullopt;
  }
  if (i != n) return std::nullopt;
  return std::strtod(s.c_str(), nullptr);
}

// What a plain (unquoted, untagged) scalar means to go-yaml v2.
ordered_json resolvePlain(const std::string& s) {
  if (isNull(s)) return nullptr;
  if (auto b = boolOf(s)) return *b;
  if (auto f = specialFloat(s)) return *f;
  char c = s[0];
  if (!(c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'))) return s;
  std::string plain;
  for (char ch : s)
    if (ch != '_') plain += ch;
  if (auto i = integerOf(plain)) return *i;
  if (auto f = floatOf(plain)) return *f;
  return s;
}

// Whether `s` written plain could be read back as anything but this string, by YAML 1.1 or 1.2
// readers alike (timestamps and sexagesimal numbers included).
bool needsQuotes(const std::string& s) {
  if (s.empty() || !resolvePlain(s).is_string()) return true;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool numberLike = digit(s[0]) || (s.size() > 1 && (s[0] == '+' || s[0] == '-' || s[0] == '.') && digit(s[1]));
  if (numberLike && (s.find(':') != std::string::npos || s.find('-', 1) != std::string::npos))
    return true;  // 1:20, 2002-12-14
  std::string lower;
  for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower == "null" || lower == "true" || lower == "false" || lower == ".inf" || lower == "-.inf" ||
         lower == "+.inf" || lower == ".nan" || lower == "=" || lower == "<<";
}

std::string at(const yaml_mark_t& m) {
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

std::string tagOf(const yaml_char_t* tag) { return tag ? reinterpret_cast<const char*>(tag) : ""; }

struct Parser {
  yaml_parser_t p;
  Parser() { yaml_parser_initialize(&p); }
  ~Parser() { yaml_parser_delete(&p); }
};

struct Event {
  yaml_event_t e{};
  bool live = false;
  ~Event() {
    if (live) yaml_event_delete(&e);
  }
};

// An open mapping or sequence: its value, and for a mapping the key waiting for its value and
// the keys seen (a hash set: ordered_json's own lookup is linear, quadratic on a hostile map).
struct Frame {
  ordered_json value;
  bool mapping = false;
  bool haveKey = false;
  std::string key;
  std::unordered_set<std::string> keys;
};

}  // namespace

Result<ordered_json> parseYaml(std::string_view text) {
  Parser parser;
  yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  std::vector<Frame> stack;
  std::optional<ordered_json> document;
  size_t nodes = 0;
  int documents = 0;
  // Places `v` (a finished node) into the open container, or makes it the document.
  // `raw` is a scalar's text (a key's), `plainScalar` whether it was unquoted (only then is << a merge key).
  auto place = [&](ordered_json v, bool isScalar, bool plainScalar, const std::string& raw,
                   const yaml_mark_t& m) -> Status {
    if (stack.empty()) {
      document = std::move(v);
      return {};
    }
    Frame& f = stack.back();
    if (!f.mapping) {
      f.value.push_back(std::move(v));
      return {};
    }
    if (!f.haveKey) {
      if (!isScalar) return Error::Invalid("YAML " + at(m) + ": a key that is not a scalar");
      if (plainScalar && raw == "<<") return Error::Invalid("YAML " + at(m) + ": merge keys (<<) are not supported");
      if (!f.keys.insert(raw).second)
        return Error::Invalid("YAML " + at(m) + ": duplicate key '" + util::printable(raw, 60) + "'");
      f.key = raw;
      f.haveKey = true;
      return {};
    }
    // Keys are unique (checked above): append without ordered_map's linear lookup.
    f.value.get_ref<ordered_json::object_t&>().emplace_back(std::move(f.key), std::move(v));
    f.haveKey = false;
    return {};
  };
  while (true) {
    Event ev;
    if (!yaml_parser_parse(&parser.p, &ev.e)) {
      std::string problem = parser.p.problem ? parser.p.problem : "unreadable";
      return Error::Invalid("YAML " + at(parser.p.problem_mark) + ": " + problem +
                            (parser.p.context ? std::string(" (") + parser.p.context + ")" : ""));
    }
    ev.live = true;
    const yaml_mark_t& m = ev.e.start_mark;
    switch (ev.e.type) {
      case YAML_STREAM_START_EVENT:
      case YAML_DOCUMENT_END_EVENT:
      case YAML_NO_EVENT: break;
      case YAML_STREAM_END_EVENT:
        if (!document) return Error::Invalid("no YAML document");
        return std::move(*document);
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1) return Error::Invalid("YAML " + at(m) + ": more than one document");
        break;
      case YAML_ALIAS_EVENT:
        return Error::Invalid("YAML " + at(m) + ": aliases (*" + util::printable(tagOf(ev.e.data.alias.anchor), 40) +
                              ") are not supported");
      case YAML_SCALAR_EVENT: {
        if (++nodes > kYamlMaxNodes)
          return Error::Invalid("YAML " + at(m) + ": more than " + std::to_string(kYamlMaxNodes) + " nodes");
        if (ev.e.data.scalar.length > kYamlMaxScalar)
          return Error::Invalid("YAML " + at(m) + ": a scalar of " + std::to_string(ev.e.data.scalar.length) +
                                " bytes (at most " + std::to_string(kYamlMaxScalar) + ")");
        std::string raw(reinterpret_cast<const char*>(ev.e.data.scalar.value), ev.e.data.scalar.length);
        std::string tag = tagOf(ev.e.data.scalar.tag);
        if (!tag.empty() && tag != YAML_STR_TAG)
          return Error::Invalid("YAML " + at(m) + ": the tag '" + util::printable(tag, 60) + "' is not supported");
        bool plain = tag.empty() && ev.e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        KDK_TRY_STATUS(place(plain ? resolvePlain(raw) : ordered_json(raw), true, plain, raw, m));
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        bool mapping = ev.e.type == YAML_MAPPING_START_EVENT;
        if (++nodes > kYamlMaxNodes)
          return Error::Invalid("YAML " + at(m) + ": more than " + std::to_string(kYamlMaxNodes) + " nodes");
        if (stack.size() >= static_cast<size_t>(kYamlMaxDepth))
          return Error::Invalid("YAML " + at(m) + ": nested deeper than " + std::to_string(kYamlMaxDepth));
        if (!stack.empty() && stack.back().mapping && !stack.back().haveKey)
          return Error::Invalid("YAML " + at(m) + ": a key that is not a scalar");
        std::string tag = tagOf(mapping ? ev.e.data.mapping_start.tag : ev.e.data.sequence_start.tag);
        if (!tag.empty() && tag != (mapping ? YAML_MAP_TAG : YAML_SEQ_TAG))
          return Error::Invalid("YAML " + at(m) + ": the tag '" + util::printable(tag, 60) + "' is not supported");
        Frame f;
        f.mapping = mapping;
        f.value = mapping ? ordered_json::object() : ordered_json::array();
        stack.push_back(std::move(f));
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        ordered_json v = std::move(stack.back().value);
        stack.pop_back();
        KDK_TRY_STATUS(place(std::move(v), false, false, "", m));
        break;
      }
    }
  }
}

namespace {

struct Emitter {
  yaml_emitter_t e;
  std::string out;
  Emitter() {
    yaml_emitter_initialize(&e);
    yaml_emitter_set_output(&e, &Emitter::write, this);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_emitter_set_indent(&e, 2);
  }
  ~Emitter() { yaml_emitter_delete(&e); }
  static int write(void* self, unsigned char* buf, size_t size) {
    static_cast<Emitter*>(self)->out.append(reinterpret_cast<const char*>(buf), size);
    return 1;
  }
  Status emit(yaml_event_t& ev, bool initialized) {
    if (!initialized || !yaml_emitter_emit(&e, &ev))
      return Error::Invalid(std::string("YAML output: ") + (e.problem ? e.problem : "cannot be written"));
    return {};
  }
  // A string that must be quoted is double-quoted, as go-yaml writes it (name: "0").
  Status scalar(const std::string& text, bool plainImplicit) {
    yaml_event_t ev;
    int ok = yaml_scalar_event_initialize(&ev, nullptr, nullptr, reinterpret_cast<const yaml_char_t*>(text.data()),
                                          static_cast<int>(text.size()), plainImplicit, 1,
                                          plainImplicit ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    if (!ok)
      return Error::Invalid("YAML output: '" + util::printable(text, 60) +
                            "' is not UTF-8");  // libyaml's only refusal here
    return emit(ev, ok);
  }
};

std::string numberText(const ordered_json& v) {
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d < 0 ? "-.inf" : ".inf";
  }
  return v.dump();
}

// One pending step of the walk: a value to open, or the end of a container.
struct Step {
  const ordered_json* value;  // null for a key or a close
  const std::string* key;     // a mapping's key, written as a string
  bool close;
  bool mapping;
};

}  // namespace

Result<std::string> emitYaml(const ordered_json& doc) {
  Emitter em;
  yaml_event_t ev;
  KDK_TRY_STATUS(em.emit(ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING)));
  KDK_TRY_STATUS(em.emit(ev, yaml_document_start_event_initialize(&ev, nullptr, nullptr, nullptr, 1)));
  // Depth-first with an explicit stack; a mapping's keys are pushed as string values ahead of theirs.
  std::vector<Step> todo{{&doc, nullptr, false, false}};
  size_t depth = 0;
  while (!todo.empty()) {
    Step s = todo.back();
    todo.pop_back();
    if (s.close) {
      --depth;
      KDK_TRY_STATUS(
          em.emit(ev, s.mapping ? yaml_mapping_end_event_initialize(&ev) : yaml_sequence_end_event_initialize(&ev)));
      continue;
    }
    if (s.key) {
      KDK_TRY_STATUS(em.scalar(*s.key, !needsQuotes(*s.key)));
      continue;
    }
    const ordered_json& v = *s.value;
    if (v.is_object() || v.is_array()) {
      if (++depth > static_cast<size_t>(kYamlMaxDepth))
        return Error::Invalid("YAML output: nested deeper than " + std::to_string(kYamlMaxDepth));
      bool mapping = v.is_object();
      int ok = mapping ? yaml_mapping_start_event_initialize(&ev, nullptr, nullptr, 1, YAML_BLOCK_MAPPING_STYLE)
                       : yaml_sequence_start_event_initialize(&ev, nullptr, nullptr, 1, YAML_BLOCK_SEQUENCE_STYLE);
      KDK_TRY_STATUS(em.emit(ev, ok));
      todo.push_back({nullptr, nullptr, true, mapping});
      // Pushed in reverse so that they come off in order.
      if (mapping) {
        std::vector<Step> pairs;
        for (auto it = v.begin(); it != v.end(); ++it) {
          pairs.push_back({nullptr, &it.key(), false, false});
          pairs.push_back({&it.value(), nullptr, false, false});
        }
        todo.insert(todo.end(), pairs.rbegin(), pairs.rend());
      } else {
        for (auto it = v.rbegin(); it != v.rend(); ++it) todo.push_back({&*it, nullptr, false, false});
      }
      continue;
    }
    if (v.is_string()) {
      const std::string& t = v.get_ref<const std::string&>();
      KDK_TRY_STATUS(em.scalar(t, !needsQuotes(t)));
    } else if (v.is_null()) {
      KDK_TRY_STATUS(em.scalar("null", 1));
    } else if (v.is_boolean()) {
      KDK_TRY_STATUS(em.scalar(v.get<bool>() ? "true" : "false", 1));
    } else if (v.is_number()) {
      KDK_TRY_STATUS(em.scalar(numberText(v), 1));
    } else {
      return Error::Invalid("YAML output: a binary value");
    }
  }
  KDK_TRY_STATUS(em.emit(ev, yaml_document_end_event_initialize(&ev, 1)));
  KDK_TRY_STATUS(em.emit(ev, yaml_stream_end_event_initialize(&ev)));
  if (!yaml_emitter_flush(&em.e)) return Error::Invalid("YAML output: cannot be written");
  return std::move(em.out);
}

}  // namespace kernodeck::hook
