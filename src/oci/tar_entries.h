// The tar half of a layer walk (layer_scan.h): reads a layer's entries from an opened libarchive
// tar reader, classifies each as containerd's applier would, hashes and captures the files the
// options ask for, and flags refused and odd entries. The streams and threads that feed the
// reader are layer_scan.cc's.
#pragma once

#include <string>

#include "kernodeck/oci/layer_scan.h"

struct archive;

namespace kernodeck::oci {

// Reads the tar's entries into `out` (entries, unsafe, suspicious, fileCount); a damaged archive
// or a bound of `opts` passed stops the walk with `out.error` set (when not already set).
void readTarEntries(struct archive* tar, const ScanOptions& opts, LayerScan& out);

// libarchive's last error on `a`, made printable; `fallback` when it has none.
std::string archiveError(struct archive* a, const char* fallback);

}  // namespace kernodeck::oci
