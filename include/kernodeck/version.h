#pragma once

namespace kernodeck {
inline constexpr const char* kVersion = "0.1.0";
// Bumped whenever a change alters what an audit reports for the same bytes;
// keys the per-layer result cache.
inline constexpr int kAnalysisVersion = 2;  // 2: rpm and apk databases captured
}  // namespace kernodeck
