// `kernodeck resume check --cmd`: does the user's own training resume from a checkpoint onto
// the trajectory it would have followed without stopping?
//
// The user's command (a CommandTemplate; never a shell) is run three times in a fresh work
// folder: straight to step N; to step K, writing a checkpoint; resumed from that checkpoint to
// step N. The final weights of the straight and the resumed run (.pt, .safetensors or .npy)
// are compared under a declared criterion (exact, abs<=X, rel<=X, cosine>=X), the measured
// value printed against the threshold. The checkpoint is inspected for the state a resume
// needs (model, optimizer, RNG, step counter, LR scheduler, data order), so a difference is
// explained by what the checkpoint lacks; when the weights differ, a second straight run
// tells a training that is not deterministic apart from one that loses state.
//
// A difference is a finding (resume.diverged or resume.nondeterministic: exit 1); only what
// keeps the check from being made (the command fails, times out, writes no checkpoint or no
// weights, the weights cannot be read) fails a step (exit 3).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/record/command_template.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/report/report.h"

namespace kernodeck::record {

// The placeholders a resume command may use, and the environment variables that carry the
// same values (KERNODECK_RESUME_STEPS...; KERNODECK_RESUME_FROM is unset outside the resumed
// run, as {resume} is empty there).
const std::vector<std::string>& resumePlaceholders();

struct ResumeCommandOptions {
  CommandTemplate command;
  std::string commandText;                       // the command as the user gave it, for the report
  int steps = 20, at = 10;                       // N and K, 0 < K < N
  std::string weights;                           // the final weights file, relative to {out}
  std::string checkpointName = "checkpoint.pt";  // {checkpoint}, relative to {out}
  Criterion criterion;                           // exact, abs, rel or cosine
  unsigned timeoutSeconds = 600;                 // per run
  std::string cwd;                               // where the command runs; empty: the current folder
  std::string workRoot;                          // where the fresh work folder is made; empty: the temp folder
  bool keep = false;                             // keep the work folder (runs' outputs and logs) for inspection
  // Says what a checkpoint holds (`resume inspect`'s report, from the LibTorch plugin).
  // Empty: the inspect step is skipped.
  std::function<report::Report(const std::string& path)> inspect;
};

// The options a user gave that make no check: K outside 1..N-1, --weights or
// --checkpoint-name absolute or with "..", weights in a format Kernodeck does not read, a
// criterion that ranks samples (topk, knn).
Status validate(const ResumeCommandOptions& o);
// Runs the check (validate() first: a bad option fails the first step).
report::Report resumeCheckCommand(const ResumeCommandOptions& o);

// The pieces of state a resume needs, as found in a checkpoint.
struct CheckpointState {
  bool inspected = false;         // the checkpoint reader read it
  std::string format, why;        // why: the reader's error when it could not
  std::vector<std::string> keys;  // top-level keys found
  // "model", "optimizer state", "RNG state", "step counter", "LR scheduler", "data order";
  // absent stays empty when the reader could not read it (nothing is known to be missing).
  std::vector<std::string> held, absent;
};
// From `resume inspect`'s report (its "checkpoint" section), and the checkpoint's bytes
// scanned for the keys projects give the data order (data_rng, sampler, epoch_perm...):
// torch.save stores its pickle uncompressed. Pure.
CheckpointState assessCheckpoint(const report::Report* inspected, std::string_view bytes);

// Two runs' final weights compared tensor by tensor (matched by name), each tensor as one
// sample: the criterion's measure per tensor, the worst over all. A tensor missing from one
// side, or of another shape or dtype, or NaN/Inf where the other run has a number, is a
// problem (the comparison fails). `criterion` is exact, abs, rel or cosine.
struct WeightsComparison {
  bool pass = false;
  double measure = 0;  // max error, or min cosine, over the tensors
  int64_t tensors = 0, beyond = 0;
  std::vector<SampleValue> worst;  // tensors by name, worst first (up to 5)
  std::vector<std::string> problems;
  std::string summary;  // "exact: max abs error 0.0518 > 0 over 6 tensor(s), 6 beyond (worst: ...)"
};
WeightsComparison compareWeights(const Criterion& c, const std::vector<Tensor>& a, const std::vector<Tensor>& b);

// A weights file read by its extension: .pt/.pth (torch.save, through LibTorch),
// .safetensors, .npy.
Result<std::vector<Tensor>> readWeights(const std::string& path);

}  // namespace kernodeck::record
