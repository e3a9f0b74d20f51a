// The string keys of a torch.save pickle, found without LibTorch: for the readers on both sides of
// the plugin (record's resume check, the plugin's resume inspect).
#pragma once

#include <functional>
#include <string_view>

namespace kernodeck::libtorch {

// Calls fn with each string the pickle seems to hold as a SHORT_BINUNICODE or BINUNICODE opcode
// (at most 256 bytes), found by scanning its bytes rather than running it: the dictionary keys of
// a checkpoint ("optimizer", "fc1.weight") even where no unpickler can rebuild the objects
// around them. A byte that only looks like an opcode yields a string that is none, so callers
// look for names they know; nothing is allocated, so a scan of a large file costs no memory.
void forEachPickleString(std::string_view pickle, const std::function<void(std::string_view)>& fn);

}  // namespace kernodeck::libtorch
