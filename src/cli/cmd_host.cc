// kernodeck host [--host-root DIR] [--json]: the GPU facts of this node, as the hook sees them.
#include <boost/program_options.hpp>

#include "commands.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/report/report.h"
#include "options.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int runHost(const std::vector<std::string>& args) {
  po::options_description opts("usage: kernodeck host [options]\n\noptions");
  std::string root = "/", output;
  bool json = false, help = false;
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")(
      "host-root", po::value(&root), "read /proc, /sys and /dev under this root (default /)")(
      "json", po::bool_switch(&json), "print JSON")("output,o", po::value(&output), "write to FILE instead of stdout");
  if (int rc = parseOptions("host", args, opts); rc >= 0) return rc;
  if (help) return printHelp(opts, "exit codes: 0 ok; 2 usage error; 3 the output could not be written\n");
  host::HostFacts facts = host::readHostFacts(root);
  std::string text = json ? facts.toJson().dump(2) + "\n" : facts.toText();
  return emit(text, output);
}

}  // namespace kernodeck::cli
