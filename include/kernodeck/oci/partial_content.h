// What a layer walk keeps of a file in part (layer_scan.h's PartialCapture: a cuda-compat
// libcuda.so's note bytes, an ELF file's GPU code) in place of its bytes starts with one of these
// (gpu/fwd_note_capture.h kKeptMagic, gpu/gpu_code_scan.h kGpuCodeMagic); the files kept in part
// are ELF files, which never do. A reader that would hash or parse a file's bytes (a RECORD row's
// rehash) skips such content: it is not the file.
#pragma once

#include <string_view>

namespace kernodeck::oci {

bool isPartialContent(std::string_view content);

}  // namespace kernodeck::oci
