// kernodeck probe: see include/kernodeck/probe/probe_cli.h. Its flags are parsed
// without Boost so the same code builds as the standalone kernodeck-probe.
#include "commands.h"
#include "kernodeck/probe/probe_cli.h"

namespace kernodeck::cli {

int runProbe(const std::vector<std::string>& args) { return probe::probeCommand(args, "kernodeck probe"); }

}  // namespace kernodeck::cli
