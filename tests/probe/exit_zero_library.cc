// What a hostile image ships to turn a gate's failure into a pass (issue 25, section 1): a
// library whose constructor ends the process with exit status 0 as soon as it is loaded, through
// $KERNODECK_TORCH_PLUGIN (dlopen) or /etc/ld.so.preload (the dynamic loader). The gate tests put
// it in workload images; nothing that decides may ever load it.
#include <unistd.h>

__attribute__((constructor)) static void exitZero() { ::_exit(0); }
