// A torch.save zip's entries as pt_zip.cc reads them, through libarchive: `<archive>/data.pkl`,
// `<archive>/byteorder` (little-endian only) and the storages `<archive>/data/<key>`, every size
// bounded by the file's own. Private to the record module.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "kernodeck/util/result.h"

namespace kernodeck::record::pt {

// The zip's entries, named without the `<archive>/` prefix.
struct PtArchive {
  std::string pickle;
  std::map<std::string, std::string> storages;  // key -> bytes
  uint64_t storageBytes = 0;                    // all storages together
};

// The archive's data.pkl, and its storages unless `storages` is false.
Result<PtArchive> readArchive(std::string_view bytes, bool storages = true);

}  // namespace kernodeck::record::pt
