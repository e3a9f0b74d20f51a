// Where a resume loses the trajectory, once `resume check` found that it does: which state the
// checkpoint lacks, and which it holds but the resumed run did not restore.
//
// Two probes, both on the user's own command: the resumed run stopped at K with no step taken
// (its weights are the model right after loading, compared with the weights of the run that
// saved the checkpoint), and a straight and a resumed run to K+1 that each save a checkpoint
// there (compared piece by piece where Kernodeck can read them: one step after resuming, a
// piece that was not restored differs). The explanation names only what these show or what the
// checkpoint lacks among the state every step uses; an LR scheduler or a data order is named
// only when nothing else explains the difference.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/record/resume_check.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

// What the probes showed. `known` false: the probe could not be made (the command failed, wrote
// no weights or checkpoint, or the checkpoints cannot be read without LibTorch).
struct ResumeLocation {
  bool modelKnown = false, modelRestored = true;  // right after loading, equal to what was saved
  bool firstKnown = false, firstDiffers = false;  // the weights one step after resuming
  bool piecesKnown = false;
  std::vector<std::string> differing;  // pieces that differ one step after resuming, in kPieces order
};

// The keys projects give the state that fixes the data order (the shuffling generator, the
// sampler, the current epoch's permutation). `resume inspect` does not look for them.
const std::vector<std::string>& dataOrderKeys();

// The piece of state a checkpoint's top-level key holds ("model", "optimizer state", ...), ""
// when it is none the names projects give them.
std::string pieceOfKey(const std::string& key);

// The pieces whose tensors differ between two checkpoints (.pt files torch.save wrote, read
// without LibTorch), in the order of `kPieces`; an error when either cannot be read.
Result<std::vector<std::string>> differingPieces(const std::string& a, const std::string& b);

// The clause of resume.diverged that says why: what the checkpoint lacks, or holds and the
// resumed run did not restore ("the checkpoint holds optimizer state, but the resumed run did
// not restore it: ..."). Pure.
std::string explainResume(const CheckpointState& state, const ResumeLocation& where, int at);

}  // namespace kernodeck::record
