// The sealing of `dossier replay --run`: the dossier's code (pip install, the entry point)
// runs in a new network namespace with only loopback, when the kernel allows one.
#pragma once

#include <string>
#include <vector>

namespace kernodeck::cli {

// `kernodeck dossier _sealed PROG ARG...` (internal): enters a new network namespace (as
// root directly, otherwise inside a new user namespace that maps the caller to itself),
// brings loopback up, and executes PROG with its arguments. Exit 125 when the namespace
// cannot be made, 127 when PROG cannot be executed.
int sealedExec(const std::vector<std::string>& argv);

struct Sealing {
  std::vector<std::string> prefix;  // the argv prefix for the sealed commands; empty: not available
  std::string network;              // what the replay.network finding says
  std::string user;                 // "root (uid 0)"
  std::string reason;               // prefix empty: why ("the kernel refused a new network namespace (...)")
};
// Tries the sealing once (`self dossier _sealed true`) and says what a replay will get.
Sealing probeSealing(const std::string& self);

}  // namespace kernodeck::cli
