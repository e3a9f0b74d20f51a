#include "kernodeck/hook/yaml_document.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "kernodeck/hook/hook_config.h"

namespace hook_yaml_document_test {

using namespace kernodeck;
using nlohmann::ordered_json;

namespace {

// NVIDIA's CDI spec as `nvidia-ctk cdi generate` writes it by default (YAML, its key order and
// quoting), shortened.
const char* kNvidiaYaml = R"(---
cdiVersion: 0.5.0
containerEdits:
  deviceNodes:
  - path: /dev/nvidia-uvm
  - path: /dev/nvidiactl
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  hooks:
  - args:
    - nvidia-cdi-hook
    - create-symlinks
    - --link
    - libglxserver_nvidia.so.550.54.15::/usr/lib/x86_64-linux-gnu/nvidia/xorg/libglxserver_nvidia.so
    hookName: createContainer
    path: /usr/bin/nvidia-cdi-hook
  mounts:
  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
    options:
    - ro
    - nosuid
    - nodev
    - bind
devices:
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: "0"
- containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
  name: all
kind: nvidia.com/gpu
)";

ordered_json parsed(const std::string& text) {
  auto r = hook::parseYaml(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ordered_json();
}

}  // namespace

TEST(YamlDocument, ReadsNvidiasSpecAndAddsTheHookInYaml) {
  ordered_json spec = parsed(kNvidiaYaml);
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");       // a version, not a number
  EXPECT_EQ(spec["devices"][0]["name"], "0");   // quoted: a string
  EXPECT_EQ(spec.begin().key(), "cdiVersion");  // the file's key order
  auto e = hook::makeHookEntry("/usr/local/bin/kernodeck-hook", {"--policy", "enforce"});
  ASSERT_TRUE(e.ok());
  auto edited = hook::addHookToCdiSpec(spec, *e);
  ASSERT_TRUE(edited.ok()) << edited.error().message;
  auto text = hook::emitYaml(*edited);
  ASSERT_TRUE(text.ok()) << text.error().message;
  // What is written reads back as the edited spec: NVIDIA's hook first, ours after, "0" still a string.
  ordered_json back = parsed(*text);
  EXPECT_EQ(back, *edited) << *text;
  EXPECT_EQ(back["containerEdits"]["hooks"][0]["path"], "/usr/bin/nvidia-cdi-hook");
  EXPECT_EQ(back["containerEdits"]["hooks"][1]["path"], "/usr/local/bin/kernodeck-hook");
  EXPECT_NE(text->find("name: \"0\"\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("    - --link\n"), std::string::npos) << *text;  // plain where go-yaml writes it plain
  EXPECT_NE(text->find("cdiVersion: 0.5.0\n"), std::string::npos) << *text;
  EXPECT_EQ(text->back(), '\n');
  // Idempotent on the YAML too.
  auto twice = hook::addHookToCdiSpec(back, *e);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(*twice, back);
}

TEST(YamlDocument, PlainScalarsAreReadAsGoYamlV2ReadsThem) {
  struct Case {
    const char* yaml;
    ordered_json want;
  } cases[] = {
      {"v: 12", 12},
      {"v: -5", -5},
      {"v: 0x1F", 31},
      {"v: 0o17", 15},
      {"v: 017", 15},  // YAML 1.1: a leading 0 is octal (a device node's fileMode: 0666)
      {"v: 0b101", 5},
      {"v: 1_000", 1000},
      {"v: 9223372036854775807", INT64_MAX},
      {"v: 18446744073709551615", UINT64_MAX},
      {"v: 1.5", 1.5},
      {"v: .5", 0.5},
      {"v: 1e3", 1000.0},
      {"v: 0.5.0", "0.5.0"},
      {"v: 1.2.3-rc1", "1.2.3-rc1"},
      {"v: 12:30", "12:30"},
      {"v: yes", true},
      {"v: On", true},
      {"v: n", false},
      {"v: FALSE", false},
      {"v: ~", nullptr},
      {"v:", nullptr},
      {"v: Null", nullptr},
      {"v: '12'", "12"},
      {"v: \"yes\"", "yes"},
      {"v: !!str 12", "12"},
      {"v: !!str", ""},
      {"v: /dev/nvidia0", "/dev/nvidia0"},
      {"v: NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_VISIBLE_DEVICES=void"},
      {"v: -x", "-x"},
      {"v: +", "+"},
      {"v: .", "."},
      {"v: 0x", "0x"},
      {"v: 08", 8.0},  // not octal: go-yaml's float fallback
      {"v: [1, a, {b: c}]", ordered_json::parse(R"([1, "a", {"b": "c"}])")},
      {"v: {}", ordered_json::object()},
      {"v: []", ordered_json::array()},
      {"'<<': 1", ordered_json()},  // a quoted << is a plain key (checked below)
  };
  for (const auto& c : cases) {
    ordered_json doc = parsed(c.yaml);
    if (std::string(c.yaml).starts_with("'<<'")) {
      EXPECT_EQ(doc, ordered_json::parse(R"({"<<": 1})"));
      continue;
    }
    ASSERT_TRUE(doc.is_object()) << c.yaml;
    EXPECT_EQ(doc["v"], c.want) << c.yaml << " read as " << doc["v"].dump();
    EXPECT_EQ(doc["v"].type(), c.want.type()) << c.yaml << " read as " << doc["v"].dump();
  }
  ordered_json inf = parsed("a: .inf\nb: -.Inf\nc: .NaN");
  EXPECT_TRUE(std::isinf(inf["a"].get<double>()) && inf["a"].get<double>() > 0);
  EXPECT_TRUE(std::isinf(inf["b"].get<double>()) && inf["b"].get<double>() < 0);
  EXPECT_TRUE(std::isnan(inf["c"].get<double>()));
  EXPECT_EQ(parsed(R"({"json": [1, "two", null, true]})"),
            ordered_json::parse(R"({"json": [1, "two", null, true]})"));  // JSON is YAML
}

// Every string comes back as the same string, however much it looks like something else.
TEST(YamlDocument, WritingQuotesWhatWouldReadBackAsSomethingElse) {
  const char* strings[] = {"yes",    "No",   "on",        "y",       "1",      "-1",    "0x10",       "017",
                           "1_0",    "1.5",  "1e3",       ".inf",    "-.INF",  ".nan",  "~",          "null",
                           "NULL",   "",     " ",         " lead",   "trail ", "12:30", "2002-12-14", "<<",
                           "=",      "-",    "- a",       ": x",     "a: b",   "#x",    "a #b",       "[x]",
                           "{x}",    "*x",   "&x",        "!x",      "%x",     "@x",    "`x",         "'",
                           "\"",     "a\nb", "tab\there", "ünïcode", "0.5.0",  "true",  "False",      "/dev/nvidia0",
                           "--link", "a::b"};
  ordered_json doc = ordered_json::object();
  ordered_json list = ordered_json::array();
  for (const char* s : strings) {
    doc[std::string("k") + s] = s;  // as values
    list.push_back(s);
  }
  for (const char* s : strings) doc[s] = 1;  // and as keys
  doc["list"] = list;
  doc["numbers"] = ordered_json::parse(R"([0, -7, 18446744073709551615, 1.5, -0.25, 1e300, true, false, null])");
  doc["empty"] = ordered_json::object();
  auto text = hook::emitYaml(doc);
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto back = hook::parseYaml(*text);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << *text;
  EXPECT_EQ(*back, doc) << *text;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    EXPECT_EQ((*back)[it.key()].type(), it.value().type()) << it.key();
  }
  ordered_json nonFinite = {{"a", HUGE_VAL}, {"b", -HUGE_VAL}};
  auto nf = hook::emitYaml(nonFinite);
  ASSERT_TRUE(nf.ok());
  EXPECT_EQ(*nf, "a: .inf\nb: -.inf\n");
  EXPECT_FALSE(hook::emitYaml(ordered_json{{"bad", std::string("\xff\xfe")}}).ok());  // not UTF-8
}

// Hostile or unsupported YAML: one line naming what and where, quickly.
TEST(YamlDocument, HostileYamlIsRefusedWithOneLine) {
  std::string laughs = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ",*" + char(c - 1) + ",*" + char(c - 1) + ",*" +
              char(c - 1) + "]\n";
  std::string deepBlock;
  for (int i = 0; i < 100; ++i) deepBlock += std::string(i * 2, ' ') + "k:\n";
  std::string manyKeys = "{";
  for (int i = 0; i < 3; ++i) manyKeys += "k" + std::to_string(i) + ": 1, ";
  manyKeys += "k1: 2}";
  struct Case {
    std::string yaml;
    const char* says;
  } cases[] = {
      {"a: &x 1\nb: *x\n", "line 2, column 4: aliases (*x) are not supported"},
      {laughs, "aliases"},
      {std::string(200, '[') + std::string(200, ']'), "nested deeper than 64"},
      {std::string(100000, '['), "nested deeper than 64"},
      {deepBlock, "nested deeper than 64"},
      {"a: !foo 1\n", "the tag '!foo' is not supported"},
      {"a: !!binary aGk=\n", "the tag 'tag:yaml.org,2002:binary' is not supported"},
      {"a: !!int 1\n", "tag:yaml.org,2002:int"},
      {"!!set {a, b}\n", "tag:yaml.org,2002:set"},
      {"a: 1\nb: 2\na: 3\n", "line 3, column 1: duplicate key 'a'"},
      {manyKeys, "duplicate key 'k1'"},
      {"'a': 1\n\"a\": 2\n", "duplicate key 'a'"},
      {"a: 1\n---\nb: 2\n", "more than one document"},
      {"", "no YAML document"},
      {"# only a comment\n", "no YAML document"},
      {"<<: {a: 1}\n", "merge keys (<<) are not supported"},
      {"? [a]\n: 1\n", "a key that is not a scalar"},
      {"? {a: b}\n: 1\n", "a key that is not a scalar"},
      {"a: [1, 2\n", "YAML line"},
      {"a: 'unterminated\n", "YAML line"},
      {"a: \xc3\x28\n", "invalid"},
      {"\t- a\n", "YAML line"},
      {"a: " + std::string(2u << 20, 'x') + "\n", "a scalar of 2097152 bytes (at most 1048576)"},
  };
  for (const auto& c : cases) {
    auto start = std::chrono::steady_clock::now();
    auto r = hook::parseYaml(c.yaml);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
    EXPECT_LT(secs, 2.0) << c.says;
  }
}

// Limits that hold on large input without going quadratic: a mapping of 100,000 keys, and the
// node limit.
TEST(YamlDocument, LargeDocumentsStayLinear) {
  std::string big;
  for (int i = 0; i < 100000; ++i) big += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  auto start = std::chrono::steady_clock::now();
  auto r = hook::parseYaml(big);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 100000u);
  EXPECT_EQ((*r)["k99999"], 99999);
  auto text = hook::emitYaml(*r);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, big);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            30.0);  // quadratic would be minutes
  std::string nodes = "[";
  for (size_t i = 0; i <= hook::kYamlMaxNodes; ++i) nodes += "1,";
  auto tooMany = hook::parseYaml(nodes + "1]");
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.error().message.find("more than 1000000 nodes"), std::string::npos) << tooMany.error().message;
  ordered_json deep = 1;
  for (int i = 0; i < 100; ++i) deep = ordered_json::array({deep});
  EXPECT_FALSE(hook::emitYaml(deep).ok());
}

}  // namespace hook_yaml_document_test
