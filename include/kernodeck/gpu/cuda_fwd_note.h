// The `.note.cuda.fwd_compatibility` ELF note of a CUDA forward-compatibility libcuda.so (the
// cuda-compat package's /usr/local/cuda-X.Y/compat/libcuda.so.<driver>), and the decision NVIDIA
// Container Toolkit 1.20's `enable-cuda-compat` hook makes from it.
//
// The note (an SHT_NOTE section of that name) holds one ELF note: namesz, descsz, type (32-bit
// words in the file's byte order), the name "NVIDIA Corporation" padded to the section's
// alignment, then the description: JSON such as {"format":1,"CUDA version":"12.9",
// "driver":[535,550,570,575],"device":[1,2,7,8]} (keys matched without regard to case, as Go's
// encoding/json does). `driver` lists the host driver branches the library runs on; `device`
// the device families, which the toolkit does not use in its decision (neither do we).
//
// No I/O here: the caller hands a reader of the library's bytes (the hook reads the container's
// file with pread, the audit a captured copy), so a library of hundreds of MiB is never read whole.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::gpu {

struct FwdCompatNote {
  int format = 0;
  std::string cudaVersion;          // "12.9": the CUDA version the library provides
  std::vector<int> driverBranches;  // host driver branches it supports (535, 550, ...)
  std::vector<int> devices;         // device families, as NVIDIA lists them

  nlohmann::json toJson() const;
};

// Up to `len` bytes of the library at `offset`: fewer, or none, past its end.
using ByteReader = std::function<std::string(uint64_t offset, size_t len)>;

// The note of the library `read` reads: nullopt when it is an ELF file without the note (or a
// note not NVIDIA's, as the toolkit reads it); an error when it is not an ELF file, its headers
// are out of bounds, or the note's description is not the JSON above.
Result<std::optional<FwdCompatNote>> readFwdCompatNote(const ByteReader& read);

// The note's JSON description alone (for tests and for a note found by other means).
Result<FwdCompatNote> parseFwdCompatDescription(std::string_view json);

// Whether the toolkit's enable-cuda-compat hook would put the library in front of the host's
// driver (toolkit 1.20, cudacompat.UseCompat): with the library's driver version (from its name,
// libcuda.so.575.57.08) and the host's known, when the host driver's branch is one the note lists
// and the library's driver is newer than the host's; else, when the host's CUDA version is known,
// when the note's CUDA version is newer than it. `why` says which, in one sentence.
struct FwdCompatDecision {
  bool applies = false;
  std::string why;
};
FwdCompatDecision fwdCompatApplies(const FwdCompatNote& note, std::string_view libraryDriver,
                                   std::string_view hostDriver, std::string_view hostCuda);

// "libcuda.so.575.57.08" -> "575.57.08"; empty when the name is not of that shape.
std::string compatLibraryDriver(std::string_view fileName);

}  // namespace kernodeck::gpu
