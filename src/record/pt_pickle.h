// torch.save's data.pkl through a restricted pickle machine: only the opcodes torch.save emits,
// only allowlisted globals (OrderedDict, the tensor and parameter rebuilders, the storage types),
// tensors rebuilt from the archive's storages with their offset and strides checked against
// them. Stack, memo, objects, container items and the elements materialised are bounded.
// Private to the record module (pt_zip.cc names the tensors the machine rebuilt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/result.h"
#include "pt_archive.h"

namespace kernodeck::record::pt {

// The globals torch.save may name; anything else is refused.
enum class Global { OrderedDict, RebuildTensor, RebuildParameter, Storage };

struct StorageType {
  const char* name;   // torch.<name>
  const char* dtype;  // as Tensor::dtype
  size_t size;
};

struct Node;

// A pickle value: scalars inline, everything else a node owned by the machine's arena (so that
// memo references share one object and a cycle cannot leak or recurse).
struct Value {
  enum Kind { None, Bool, Int, Float, Str, Ref } kind = None;
  int64_t i = 0;
  double f = 0;
  Node* n = nullptr;
};

struct Node {
  enum Kind { Tuple, List, Dict, Str, GlobalRef, StorageRef, TensorVal } kind = Tuple;
  std::vector<Value> items;                      // Tuple, List
  std::vector<std::pair<Value, Value>> entries;  // Dict
  std::string text;                              // Str; StorageRef: key
  Global global = Global::OrderedDict;           // GlobalRef
  const StorageType* storage = nullptr;          // GlobalRef (Storage), StorageRef
  uint64_t numel = 0;                            // StorageRef
  std::unique_ptr<Tensor> tensor;                // TensorVal (no name)
  size_t collected = SIZE_MAX;                   // TensorVal: its index in the result, once named
};

// The elements a document may materialise: a few whatever its size, more per byte of storage it
// holds, never more than 2^27 nor what the command's budget has left.
uint64_t valueAllowance(const PtArchive& ar, uint64_t budgetLeft);

// The one-line error for elements past the allowance.
Error tooManyValues(uint64_t wanted, uint64_t allowance, const PtArchive& ar);

// What the machine left: the root object (STOP's value), the elements it materialised, and the
// nodes every Ref in the root reaches, which live as long as this does.
struct Unpickled {
  Value root;
  uint64_t values = 0;
  std::vector<std::unique_ptr<Node>> arena;
};

// Runs `ar`'s data.pkl, materialising at most `allowance` tensor elements.
Result<Unpickled> unpickle(const PtArchive& ar, uint64_t allowance);

}  // namespace kernodeck::record::pt
