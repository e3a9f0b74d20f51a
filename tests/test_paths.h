// The paths of this build's programs and of the source tree, as the test programs see them.
//
// They are defined in one translation unit (test_paths.cc, compiled with the paths as macros) and
// declared here, forced into every test source by the build: every other test object is then the
// same in any checkout, and ccache shares it between worktrees.
#pragma once

namespace kernodeck_test_paths {
extern const char* const kSourceDir;
extern const char* const kKernodeckBin;
extern const char* const kHookBin;
extern const char* const kMkimageBin;
extern const char* const kProbeBin;
extern const char* const kExitZeroLib;
extern const char* const kFakePluginOk;
extern const char* const kFakePluginV99;
extern const char* const kFakePluginSmall;
extern const char* const kFakePluginNoEntry;
extern const char* const kFakePluginOtherCxx;
}  // namespace kernodeck_test_paths

#ifndef KDK_TEST_PATHS_DEFINITIONS
#define SOURCE_DIR (::kernodeck_test_paths::kSourceDir)
#define KERNODECK_BIN (::kernodeck_test_paths::kKernodeckBin)
#define HOOK_BIN (::kernodeck_test_paths::kHookBin)
#define MKIMAGE_BIN (::kernodeck_test_paths::kMkimageBin)
#define PROBE_BIN (::kernodeck_test_paths::kProbeBin)
#define EXIT_ZERO_LIB (::kernodeck_test_paths::kExitZeroLib)
#define FAKE_PLUGIN_OK (::kernodeck_test_paths::kFakePluginOk)
#define FAKE_PLUGIN_V99 (::kernodeck_test_paths::kFakePluginV99)
#define FAKE_PLUGIN_SMALL (::kernodeck_test_paths::kFakePluginSmall)
#define FAKE_PLUGIN_NO_ENTRY (::kernodeck_test_paths::kFakePluginNoEntry)
#define FAKE_PLUGIN_OTHER_CXX (::kernodeck_test_paths::kFakePluginOtherCxx)
#endif
