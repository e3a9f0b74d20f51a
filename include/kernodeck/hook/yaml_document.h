// YAML documents as JSON values, for the YAML CDI specs `nvidia-ctk cdi generate` writes by
// default (/etc/cdi/nvidia.yaml) and the GPU Operator writes: read with libyaml into an
// ordered_json (key order kept), edited as JSON, written back with libyaml. Pure functions on
// strings.
//
// The reading is that of the readers of those files (container-device-interface parses YAML with
// go-yaml v2, YAML 1.1): a plain scalar is null (`~`, `null`, empty), a bool (`true`, `yes`, `on`,
// `y`, ... and their negations), an integer (decimal, 0x, 0o, 0b, a leading 0 is octal, `_`
// ignored), a float (`1.5`, `1e3`, `.inf`, `.nan`) or a string; a quoted scalar is a string.
// Writing quotes every string that either YAML 1.1 or 1.2 would read as something else, so the
// file reads back as the same values.
//
// Only what a configuration file needs is accepted, and everything else is refused with one line
// naming the first offending place (line and column): aliases (no alias bombs), merge keys `<<`,
// tags other than !!str, !!map and !!seq, keys that are not scalars, duplicate keys, more than one
// document, nesting deeper than 64, more than 1,000,000 nodes, a scalar over 1 MiB. Comments are
// not kept.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kernodeck/util/result.h"

namespace kernodeck::hook {

inline constexpr int kYamlMaxDepth = 64;
inline constexpr size_t kYamlMaxNodes = 1000000;
inline constexpr size_t kYamlMaxScalar = 1u << 20;

// The single YAML document in `text` (JSON is YAML too). An error says what and where.
Result<nlohmann::ordered_json> parseYaml(std::string_view text);

// `doc` as block-style YAML (empty containers as [] and {}), ending in a newline. Fails only on a
// string that is not UTF-8, a binary value or nesting deeper than kYamlMaxDepth.
Result<std::string> emitYaml(const nlohmann::ordered_json& doc);

}  // namespace kernodeck::hook
