// kernodeck.host/v1 (docs/host-record.md): what kernodeck-hook decided about a container and
// the host facts it decided on, written into the container at /run/kernodeck/host.json, read
// back by the probe, by `reference init --host-record` and by the hook's own second run.
// HostRecord::toJson is its one writer and parseHostRecord its one reader, so the three
// readers cannot drift from what the hook writes. parseHostFacts reads the "host" object (also
// `kernodeck host --json`'s whole output) back into HostFacts.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/gpu/expectation.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/result.h"

namespace kernodeck::host {

struct HostRecord {
  static constexpr const char* kSchema = "kernodeck.host/v1";

  std::string kernodeckVersion;
  std::string time;  // RFC 3339 UTC, when the hook ran
  struct Container {
    std::string id, bundle;  // as the runtime's state gave them
    int64_t pid = 0;
  } container;
  HostFacts host;
  bool gpuContainer = false;                               // the container asks for a GPU in any way
  std::string vendor;                                      // "nvidia", "amd" or ""
  int64_t requestedGpus = 0;                               // -1: all
  std::vector<std::string> passedNodes;                    // device paths in the spec that are GPU nodes
  std::optional<gpu::Expectation> expectation;             // the image's, when one was read
  nlohmann::json forwardCompat = nlohmann::json::array();  // the image's compat libraries as judged
  // The hook's findings, as written (already redacted): code, severity, message and evidence.
  struct Verdict {
    std::string code, severity, message;
    std::map<std::string, std::string> evidence;
  };
  std::vector<Verdict> verdicts;
  std::string policy;    // "enforce" | "warn"
  int64_t runs = 1;      // 2 when a second hook entry ran for the same container start
  std::string logError;  // why the log could not be written ("" when it could)
  std::string decision;  // "allow" | "warn" | "block"
  nlohmann::json doc;    // the document as read (parseHostRecord), null when built

  nlohmann::json toJson() const;
};

// A record, from its text (bounded by util::parseUntrustedJson) or its parsed JSON. An absent
// or null field keeps its default (hand-written records carry only what they need); a field of
// the wrong type is an Error::Invalid naming it ("... is not a kernodeck.host/v1 record:
// host.nvidia.gpus[0].arch is a number, expected a string").
Result<HostRecord> parseHostRecordJson(const nlohmann::json& j);
Result<HostRecord> parseHostRecord(std::string_view text);

// The "host" object (HostFacts::toJson) read back at `host`: absent fields keep the default, a
// wrong type is an error naming the field by its path. Null is "no driver" for nvidia and amd and
// "no problem" for a device node's problem (as toJson writes them); elsewhere it is absent under
// Nulls::Absent (a host record) and an error under Nulls::Refused (a reference's system.host).
enum class Nulls { Absent, Refused };
Result<HostFacts> parseHostFacts(const util::JsonReader& host, Nulls nulls);

}  // namespace kernodeck::host
