// One array element as a double, shared by the tensor readers (tensor_file.cc, pt_zip.cc).
#pragma once

#include <cstddef>
#include <string_view>

namespace kernodeck::record {

// Decodes one little-endian element of `size` bytes at p; dtype is named as Tensor::dtype
// (float16 bfloat16 float32 float64 int8..int64 uint8..uint64 bool).
double decodeLittleEndian(std::string_view dtype, size_t size, const unsigned char* p);

}  // namespace kernodeck::record
