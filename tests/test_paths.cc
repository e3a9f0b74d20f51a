// The one test object that names this checkout's paths (see test_paths.h).
#define KDK_TEST_PATHS_DEFINITIONS
#include "test_paths.h"

namespace kernodeck_test_paths {
const char* const kSourceDir = KDK_PATH_SOURCE_DIR;
const char* const kKernodeckBin = KDK_PATH_KERNODECK_BIN;
const char* const kHookBin = KDK_PATH_HOOK_BIN;
const char* const kMkimageBin = KDK_PATH_MKIMAGE_BIN;
const char* const kProbeBin = KDK_PATH_PROBE_BIN;
const char* const kExitZeroLib = KDK_PATH_EXIT_ZERO_LIB;
const char* const kFakePluginOk = KDK_PATH_FAKE_PLUGIN_OK;
const char* const kFakePluginV99 = KDK_PATH_FAKE_PLUGIN_V99;
const char* const kFakePluginSmall = KDK_PATH_FAKE_PLUGIN_SMALL;
const char* const kFakePluginNoEntry = KDK_PATH_FAKE_PLUGIN_NO_ENTRY;
const char* const kFakePluginOtherCxx = KDK_PATH_FAKE_PLUGIN_OTHER_CXX;
}  // namespace kernodeck_test_paths
