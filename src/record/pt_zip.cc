// torch.save's zip format read without LibTorch: the zip through libarchive, `<archive>/data.pkl`
// through a restricted pickle machine (only what torch.save emits, only allowlisted globals),
// tensors rebuilt from the `<archive>/data/<key>` storages. Every limit is checked before use.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "element_decode.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

namespace {

// Work and memory are bounded by the file's own size wherever a count could multiply it: a
// memo reference costs two bytes and may name a whole subtree again, a zero stride repeats one
// element, a deflated entry expands.
constexpr uint64_t kMaxArchiveBytes = 1ull << 30;  // all entries read, uncompressed
constexpr uint64_t kMaxExpansion = 16;             // uncompressed bytes per byte of the file
constexpr uint64_t kMaxPickleBytes = 32ull << 20;  // data.pkl
constexpr size_t kMaxEntries = 100000;
constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxMemo = 1u << 20;
constexpr size_t kMaxNodes = 1u << 20;
constexpr uint64_t kMaxItems = 1ull << 20;       // items put in containers, all together
constexpr uint64_t kMaxValues = 1ull << 27;      // tensor elements, all together (1 GiB of doubles)
constexpr uint64_t kFreeValues = 1ull << 20;     // elements any file may materialise, whatever its storage
constexpr uint64_t kValuesPerByte = 8;           // and this many more per byte of storage it holds
constexpr uint64_t kMaxWalkSteps = 1ull << 20;   // objects visited naming the tensors
constexpr uint64_t kMaxNameBytes = 64ull << 20;  // bytes of names built on that walk
constexpr size_t kMaxRank = 16;
constexpr int kMaxDepth = 8;  // nesting of dicts and lists named in the result (as pt_torch.cc)
constexpr size_t kMaxTensors = 10000;

// The zip's entries, named without the `<archive>/` prefix.
struct PtArchive {
  std::string pickle;
  std::map<std::string, std::string> storages;  // key -> bytes
  uint64_t storageBytes = 0;                    // all storages together
};

// libarchive's message for the last error, which may be null.
std::string archiveError(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? util::printable(e, 120) : "no detail from libarchive";
}

// The archive's data.pkl, and its storages unless `storages` is false.
Result<PtArchive> readArchive(std::string_view bytes, bool storages = true) {
  struct archive* a = archive_read_new();
  archive_read_support_format_zip(a);
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_read_free);
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) != ARCHIVE_OK)
    return Error::Invalid(".pt zip cannot be opened: " + archiveError(a));
  PtArchive out;
  std::optional<std::string> prefix;
  bool havePickle = false;
  uint64_t total = 0;
  const uint64_t maxTotal = std::min<uint64_t>(kMaxArchiveBytes, kMaxExpansion * bytes.size());
  size_t entries = 0;
  struct archive_entry* e = nullptr;
  for (;;) {
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return Error::Invalid(".pt zip is corrupt: " + archiveError(a));
    if (++entries > kMaxEntries) return Error::Invalid(".pt zip has too many entries");
    const char* raw = archive_entry_pathname(e);
    std::string name = raw ? raw : "";
    size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    std::string top = name.substr(0, slash), rest = name.substr(slash + 1);
    bool isPickle = rest == "data.pkl", isStorage = rest.rfind("data/", 0) == 0 && rest.size() > 5;
    if (rest == "byteorder" || isPickle || (isStorage && storages)) {
      if (prefix && *prefix != top) return Error::Invalid(".pt zip holds more than one archive folder");
      prefix = top;
    } else {
      continue;
    }
    std::string data;
    char buf[65536];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n < 0)
        return Error::Invalid(".pt zip entry " + util::printable(name, 80) + " is corrupt: " + archiveError(a));
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
      if (total > kMaxArchiveBytes) return Error::Invalid(".pt zip is too large (over 1 GiB uncompressed)");
      if (total > maxTotal)
        return Error::Invalid(".pt zip expands to more than " + std::to_string(kMaxExpansion) + " times its " +
                              std::to_string(bytes.size()) + " bytes (torch.save stores its entries uncompressed)");
      if (isPickle && data.size() + static_cast<size_t>(n) > kMaxPickleBytes)
        return Error::Invalid(".pt data.pkl is too large");
      data.append(buf, static_cast<size_t>(n));
    }
    if (rest == "byteorder") {
      if (data != "little")
        return Error::Unsupported(".pt byteorder '" + util::printable(data, 20) + "' is not supported");
    } else if (isPickle) {
      if (havePickle) return Error::Invalid(".pt zip holds data.pkl twice");
      havePickle = true;
      out.pickle = std::move(data);
    } else {
      out.storageBytes += data.size();
      if (!out.storages.emplace(rest.substr(5), std::move(data)).second)
        return Error::Invalid(".pt zip holds storage " + util::printable(rest, 80) + " twice");
    }
  }
  if (!havePickle) return Error::Invalid(".pt zip has no <archive>/data.pkl");
  return out;
}

// The globals torch.save may name; anything else is refused.
enum class Global { OrderedDict, RebuildTensor, RebuildParameter, Storage };

struct StorageType {
  const char* name;   // torch.<name>
  const char* dtype;  // as Tensor::dtype
  size_t size;
};
constexpr StorageType kStorageTypes[] = {{"FloatStorage", "float32", 4}, {"DoubleStorage", "float64", 8},
                                         {"HalfStorage", "float16", 2},  {"BFloat16Storage", "bfloat16", 2},
                                         {"IntStorage", "int32", 4},     {"LongStorage", "int64", 8},
                                         {"ShortStorage", "int16", 2},   {"CharStorage", "int8", 1},
                                         {"ByteStorage", "uint8", 1},    {"BoolStorage", "bool", 1}};

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
// holds, never more than kMaxValues nor what the command's budget has left.
uint64_t valueAllowance(const PtArchive& ar, uint64_t budgetLeft) {
  uint64_t perStorage = ar.storageBytes > (kMaxValues - kFreeValues) / kValuesPerByte
                            ? kMaxValues
                            : kFreeValues + kValuesPerByte * ar.storageBytes;
  return std::min({kMaxValues, perStorage, budgetLeft});
}

// The one-line error for elements past the allowance.
Error tooManyValues(uint64_t wanted, uint64_t allowance, const PtArchive& ar) {
  return Error::Invalid(".pt tensors would materialise " + std::to_string(wanted) + " elements from " +
                        std::to_string(ar.storageBytes) + " bytes of storage; the limit here is " +
                        std::to_string(allowance) +
                        " (2^20 plus 8 per storage byte, at most 2^27, within the command's 2^28; a tensor "
                        "named twice or with a zero stride counts each time)");
}

class Machine {
 public:
  Machine(const PtArchive& ar, uint64_t allowance) : ar_(ar), p_(ar.pickle), allowance_(allowance) {}

  // Elements materialised so far.
  uint64_t values() const { return values_; }

  Result<Value> run() {
    for (;;) {
      if (pos_ >= p_.size()) return fail("ends without STOP");
      unsigned char op = static_cast<unsigned char>(p_[pos_++]);
      if (op == '.') {
        if (stack_.size() != 1 || !marks_.empty()) return fail("STOP with a malformed stack");
        return stack_.back();
      }
      if (auto st = step(op); !st) return st.error();
    }
  }

 private:
  Error fail(const std::string& why) const {
    return Error::Invalid(".pt data.pkl: " + why + " (at byte " + std::to_string(pos_) + ")");
  }

  Result<std::string_view> take(uint64_t n) {
    if (n > p_.size() - pos_) return fail("is truncated");
    std::string_view s = std::string_view(p_).substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  Result<uint64_t> uint(int bytes) {
    auto s = take(static_cast<uint64_t>(bytes));
    if (!s) return s.error();
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k)
      v |= static_cast<uint64_t>(static_cast<unsigned char>((*s)[static_cast<size_t>(k)])) << (8 * k);
    return v;
  }
  Result<std::string> line() {
    size_t end = p_.find('\n', pos_);
    if (end == std::string::npos || end - pos_ > 200) return fail("GLOBAL name is malformed");
    std::string s = p_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  Result<Node*> node(Node::Kind kind) {
    if (arena_.size() >= kMaxNodes) return fail("has too many objects");
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->kind = kind;
    return arena_.back().get();
  }
  Result<bool> push(Value v) {
    if (stack_.size() >= kMaxStack) return fail("stack is too deep");
    stack_.push_back(v);
    return true;
  }
  Result<bool> pushNode(Node::Kind kind) {
    auto n = node(kind);
    if (!n) return n.error();
    return push(Value{Value::Ref, 0, 0, *n});
  }
  Result<Value> pop() {
    size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return fail("pops an empty stack");
    Value v = stack_.back();
    stack_.pop_back();
    return v;
  }
  // The two top values (below, top), removed from the stack.
  Result<std::pair<Value, Value>> popPair() {
    auto top = pop();
    if (!top) return top.error();
    auto below = pop();
    if (!below) return below.error();
    return std::pair<Value, Value>{*below, *top};
  }
  // The values above the last MARK, removed from the stack.
  Result<std::vector<Value>> popMark() {
    if (marks_.empty()) return fail("has no MARK to pop to");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Value> out(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return out;
  }
  Result<bool> count(uint64_t n) {
    items_ += n;
    if (items_ > kMaxItems) return fail("has too many items");
    return true;
  }
  Result<bool> tuple(std::vector<Value> items) {
    auto c = count(items.size());
    if (!c) return c.error();
    auto n = node(Node::Tuple);
    if (!n) return n.error();
    (*n)->items = std::move(items);
    return push(Value{Value::Ref, 0, 0, *n});
  }
  Result<bool> str(std::string_view s) {
    auto n = node(Node::Str);
    if (!n) return n.error();
    (*n)->text = s;
    return push(Value{Value::Ref, 0, 0, *n});
  }
  Result<bool> memoPut(uint64_t idx) {
    if (stack_.empty()) return fail("memoizes an empty stack");
    if (memo_.size() >= kMaxMemo && !memo_.count(idx)) return fail("memo is too large");
    memo_[idx] = stack_.back();
    return true;
  }
  Result<bool> memoGet(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) return fail("gets memo entry " + std::to_string(idx) + " that was never set");
    return push(it->second);
  }
  Result<bool> global(const std::string& module, const std::string& name) {
    auto n = node(Node::GlobalRef);
    if (!n) return n.error();
    Node* g = *n;
    if (module == "collections" && name == "OrderedDict")
      g->global = Global::OrderedDict;
    else if (module == "torch._utils" && name == "_rebuild_tensor_v2")
      g->global = Global::RebuildTensor;
    else if (module == "torch._utils" && name == "_rebuild_parameter")
      g->global = Global::RebuildParameter;
    else if (module == "torch") {
      for (const auto& t : kStorageTypes)
        if (name == t.name) g->storage = &t;
      if (!g->storage) return fail("refuses global torch." + util::printable(name, 60));
      g->global = Global::Storage;
    } else {
      return fail("refuses global " + util::printable(module, 60) + "." + util::printable(name, 60));
    }
    return push(Value{Value::Ref, 0, 0, g});
  }

  static Node* as(const Value& v, Node::Kind kind) { return v.kind == Value::Ref && v.n->kind == kind ? v.n : nullptr; }
  static std::optional<int64_t> intOf(const Value& v) {
    if (v.kind == Value::Int || v.kind == Value::Bool) return v.i;
    return std::nullopt;
  }

  // BINPERSID's ('storage', type, key, location, numel).
  Result<bool> persistentLoad(const Value& pid) {
    Node* t = as(pid, Node::Tuple);
    if (!t || t->items.size() != 5) return fail("persistent id is not ('storage', type, key, location, numel)");
    Node* tag = as(t->items[0], Node::Str);
    Node* type = as(t->items[1], Node::GlobalRef);
    Node* key = as(t->items[2], Node::Str);
    auto numel = intOf(t->items[4]);
    if (!tag || tag->text != "storage" || !type || type->global != Global::Storage || !key || !numel || *numel < 0)
      return fail("persistent id is not ('storage', type, key, location, numel)");
    auto data = ar_.storages.find(key->text);
    if (data == ar_.storages.end())
      return fail("storage data/" + util::printable(key->text, 40) + " is missing from the zip");
    uint64_t n = static_cast<uint64_t>(*numel);
    if (n > data->second.size() / type->storage->size)
      return fail("storage data/" + util::printable(key->text, 40) + " is smaller than its " + std::to_string(n) +
                  " elements");
    auto s = node(Node::StorageRef);
    if (!s) return s.error();
    (*s)->storage = type->storage;
    (*s)->text = key->text;
    (*s)->numel = n;
    return push(Value{Value::Ref, 0, 0, *s});
  }

  Result<std::vector<int64_t>> ints(const Value& v, const char* what) {
    Node* t = as(v, Node::Tuple);
    if (!t || t->items.size() > kMaxRank)
      return fail(std::string("tensor ") + what + " is not a tuple of at most 16 ints");
    std::vector<int64_t> out;
    for (const auto& x : t->items) {
      auto i = intOf(x);
      if (!i || *i < 0) return fail(std::string("tensor ") + what + " holds a value that is not a non-negative int");
      out.push_back(*i);
    }
    return out;
  }

  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]).
  Result<Node*> rebuildTensor(const std::vector<Value>& args) {
    if (args.size() < 4) return fail("_rebuild_tensor_v2 has too few arguments");
    Node* st = as(args[0], Node::StorageRef);
    auto offset = intOf(args[1]);
    if (!st || !offset || *offset < 0) return fail("_rebuild_tensor_v2 needs a storage and an offset");
    auto size = ints(args[2], "size");
    if (!size) return size.error();
    auto stride = ints(args[3], "stride");
    if (!stride) return stride.error();
    if (size->size() != stride->size()) return fail("tensor size and stride differ in rank");
    uint64_t numel = 1, last = static_cast<uint64_t>(*offset);
    for (size_t d = 0; d < size->size(); ++d) {
      uint64_t s = static_cast<uint64_t>((*size)[d]);
      if (s != 0 && numel > kMaxValues / s) return fail("tensor is too large");
      numel *= s;
    }
    if (numel > 0) {  // the last element read, offset included: a 0-d tensor has no dimension to check it
      for (size_t d = 0; d < size->size(); ++d) {
        uint64_t span = static_cast<uint64_t>((*size)[d]) - 1, step = static_cast<uint64_t>((*stride)[d]);
        if (step != 0 && span > st->numel / step) return fail("tensor reaches past its storage");
        last += span * step;
      }
      if (last >= st->numel)
        return fail("tensor reaches past its storage of " + std::to_string(st->numel) + " elements");
    }
    if (numel > allowance_ - values_) return tooManyValues(values_ + numel, allowance_, ar_);
    values_ += numel;
    auto n = node(Node::TensorVal);
    if (!n) return n.error();
    (*n)->tensor = std::make_unique<Tensor>();
    Tensor& t = *(*n)->tensor;
    t.dtype = st->storage->dtype;
    t.shape = *size;
    t.values.resize(static_cast<size_t>(numel));
    const auto* base = reinterpret_cast<const unsigned char*>(ar_.storages.at(st->text).data());
    std::vector<int64_t> idx(size->size(), 0);
    for (uint64_t k = 0; k < numel; ++k) {
      uint64_t at = static_cast<uint64_t>(*offset);
      for (size_t d = 0; d < idx.size(); ++d) at += static_cast<uint64_t>(idx[d]) * static_cast<uint64_t>((*stride)[d]);
      t.values[static_cast<size_t>(k)] = decodeLittleEndian(t.dtype, st->storage->size, base + at * st->storage->size);
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < (*size)[d]) break;
        idx[d] = 0;
      }
    }
    return *n;
  }

  Result<bool> reduce() {
    auto fnArgs = popPair();
    if (!fnArgs) return fnArgs.error();
    Node* g = as(fnArgs->first, Node::GlobalRef);
    Node* a = as(fnArgs->second, Node::Tuple);
    if (!g || !a) return fail("REDUCE needs an allowed global and an argument tuple");
    switch (g->global) {
      case Global::OrderedDict:
        if (!a->items.empty()) return fail("OrderedDict is called with arguments");
        return pushNode(Node::Dict);
      case Global::RebuildTensor: {
        auto t = rebuildTensor(a->items);
        if (!t) return t.error();
        return push(Value{Value::Ref, 0, 0, *t});
      }
      case Global::RebuildParameter:
        if (a->items.empty() || !as(a->items[0], Node::TensorVal)) return fail("_rebuild_parameter needs a tensor");
        return push(a->items[0]);
      case Global::Storage: break;
    }
    return fail("REDUCE calls a storage type");
  }

  Result<bool> setItems(Node* dict, const std::vector<Value>& kv) {
    if (!dict) return fail("SETITEM(S) on something that is not a dict");
    if (kv.size() % 2) return fail("SETITEMS has an odd number of values");
    auto c = count(kv.size() / 2);
    if (!c) return c.error();
    for (size_t k = 0; k + 1 < kv.size(); k += 2) dict->entries.emplace_back(kv[k], kv[k + 1]);
    return true;
  }
  Result<bool> appendItems(Node* list, const std::vector<Value>& vs) {
    if (!list) return fail("APPEND(S) on something that is not a list");
    auto c = count(vs.size());
    if (!c) return c.error();
    list->items.insert(list->items.end(), vs.begin(), vs.end());
    return true;
  }
  Result<Node*> top(Node::Kind kind, const char* op) {
    size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return fail(std::string(op) + " on an empty stack");
    Node* n = as(stack_.back(), kind);
    if (!n) return fail(std::string(op) + " on the wrong kind of object");
    return n;
  }

  // SETITEM(S) and APPEND(S): the values go into the dict or list on top of the stack.
  Result<bool> intoTop(std::vector<Value> vs, Node::Kind kind, const char* op) {
    auto n = top(kind, op);
    if (!n) return n.error();
    return kind == Node::Dict ? setItems(*n, vs) : appendItems(*n, vs);
  }

  Result<bool> step(unsigned char op) {
    switch (op) {
      case 0x80: {  // PROTO
        auto v = uint(1);
        if (!v) return v.error();
        if (*v < 2 || *v > 5) return fail("pickle protocol " + std::to_string(*v) + " is not supported");
        return true;
      }
      case 0x95: {  // FRAME: the length is advisory
        auto v = uint(8);
        if (!v) return v.error();
        return true;
      }
      case 'c': {  // GLOBAL
        auto m = line();
        if (!m) return m.error();
        auto n = line();
        if (!n) return n.error();
        return global(*m, *n);
      }
      case 0x93: {  // STACK_GLOBAL
        auto mn = popPair();
        if (!mn) return mn.error();
        Node* ms = as(mn->first, Node::Str);
        Node* ns = as(mn->second, Node::Str);
        if (!ns || !ms) return fail("STACK_GLOBAL needs two strings");
        return global(ms->text, ns->text);
      }
      case 'Q': {  // BINPERSID
        auto pid = pop();
        if (!pid) return pid.error();
        return persistentLoad(*pid);
      }
      case 'R': return reduce();
      case 'b': {  // BUILD: an OrderedDict's _metadata state is ignored
        auto state = pop();
        if (!state) return state.error();
        auto d = top(Node::Dict, "BUILD");
        if (!d) return d.error();
        return true;
      }
      case '(':
        if (marks_.size() >= kMaxStack) return fail("has too many MARKs");
        marks_.push_back(stack_.size());
        return true;
      case '}': return pushNode(Node::Dict);
      case ']': return pushNode(Node::List);
      case ')': return tuple({});
      case 't': {
        auto vs = popMark();
        if (!vs) return vs.error();
        return tuple(std::move(*vs));
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        size_t n = op - 0x84u;
        std::vector<Value> vs(n);
        for (size_t k = n; k-- > 0;) {
          auto v = pop();
          if (!v) return v.error();
          vs[k] = *v;
        }
        return tuple(std::move(vs));
      }
      case 's': {
        auto kv = popPair();
        if (!kv) return kv.error();
        return intoTop({kv->first, kv->second}, Node::Dict, "SETITEM");
      }
      case 'u': {
        auto kv = popMark();
        if (!kv) return kv.error();
        return intoTop(std::move(*kv), Node::Dict, "SETITEMS");
      }
      case 'a': {
        auto v = pop();
        if (!v) return v.error();
        return intoTop({*v}, Node::List, "APPEND");
      }
      case 'e': {
        auto vs = popMark();
        if (!vs) return vs.error();
        return intoTop(std::move(*vs), Node::List, "APPENDS");
      }
      case 'q':
      case 'r': {  // BINPUT, LONG_BINPUT
        auto i = uint(op == 'q' ? 1 : 4);
        if (!i) return i.error();
        return memoPut(*i);
      }
      case 0x94:  // MEMOIZE
        return memoPut(memo_.size());
      case 'h':
      case 'j': {  // BINGET, LONG_BINGET
        auto i = uint(op == 'h' ? 1 : 4);
        if (!i) return i.error();
        return memoGet(*i);
      }
      case 'J': {  // BININT (signed)
        auto v = uint(4);
        if (!v) return v.error();
        return push(Value{Value::Int, static_cast<int32_t>(static_cast<uint32_t>(*v)), 0, nullptr});
      }
      case 'K':
      case 'M': {  // BININT1, BININT2
        auto v = uint(op == 'K' ? 1 : 2);
        if (!v) return v.error();
        return push(Value{Value::Int, static_cast<int64_t>(*v), 0, nullptr});
      }
      case 0x8a: {  // LONG1: little-endian two's complement, at most 8 bytes here
        auto n = uint(1);
        if (!n) return n.error();
        if (*n > 8) return fail("LONG1 integer is wider than 64 bits");
        auto v = uint(static_cast<int>(*n));
        if (!v) return v.error();
        uint64_t u = *v;
        if (*n > 0 && *n < 8 && ((u >> (8 * *n - 1)) & 1)) u |= ~0ull << (8 * *n);
        return push(Value{Value::Int, static_cast<int64_t>(u), 0, nullptr});
      }
      case 'G': {  // BINFLOAT: big-endian double
        auto s = take(8);
        if (!s) return s.error();
        uint64_t u = 0;
        for (char ch : *s) u = (u << 8) | static_cast<unsigned char>(ch);
        double d;
        std::memcpy(&d, &u, 8);
        return push(Value{Value::Float, 0, d, nullptr});
      }
      case 'N': return push(Value{});
      case 0x88:
      case 0x89: return push(Value{Value::Bool, op == 0x88 ? 1 : 0, 0, nullptr});
      case 'X':
      case 0x8c:
      case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
        auto n = uint(op == 'X' ? 4 : op == 0x8c ? 1 : 8);
        if (!n) return n.error();
        auto s = take(*n);
        if (!s) return s.error();
        return str(*s);
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        return fail(std::string("opcode ") + hex + " is not one torch.save emits");
      }
    }
  }

  const PtArchive& ar_;
  const std::string& p_;
  size_t pos_ = 0;
  std::vector<Value> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value> memo_;
  std::vector<std::unique_ptr<Node>> arena_;
  uint64_t items_ = 0;
  uint64_t allowance_;
  uint64_t values_ = 0;
};

// Names the tensors under a pickle's root as pt_torch.cc's collect names them: dotted dict keys,
// [i] for list and tuple items; an int key is written as its number. The memo lets one subtree be
// named from many places, so the walk is a tree walk of a graph: its steps and the bytes of the
// names it builds are bounded, and a tensor named again is a copy charged like a new one.
class Collector {
 public:
  Collector(const PtArchive& ar, uint64_t allowance, uint64_t values)
      : ar_(ar), allowance_(allowance), values_(values) {}

  Status walk(const Value& v, const std::string& name, int depth) {
    if (depth > kMaxDepth || out.size() >= kMaxTensors || v.kind != Value::Ref) return {};
    if (++steps_ > kMaxWalkSteps)
      return Error::Invalid(".pt data.pkl shares its objects so often that naming the tensors takes more than " +
                            std::to_string(kMaxWalkSteps) + " steps");
    names_ += name.size();
    if (names_ > kMaxNameBytes)
      return Error::Invalid(".pt data.pkl shares its objects so often that the tensors' names exceed " +
                            std::to_string(kMaxNameBytes >> 20) + " MiB");
    Node& n = *v.n;
    if (n.kind == Node::TensorVal) return take(n, name);
    if (n.kind == Node::Dict) {
      for (const auto& [k, item] : n.entries) {
        std::string key = k.kind == Value::Ref && k.n->kind == Node::Str ? k.n->text
                          : k.kind == Value::Int                         ? std::to_string(k.i)
                                                                         : "?";
        KDK_TRY_STATUS(walk(item, name.empty() ? key : name + "." + key, depth + 1));
      }
    } else if (n.kind == Node::List || n.kind == Node::Tuple) {
      for (size_t i = 0; i < n.items.size(); ++i)
        KDK_TRY_STATUS(walk(n.items[i], name + "[" + std::to_string(i) + "]", depth + 1));
    }
    return {};
  }

  uint64_t values() const { return values_; }
  std::vector<Tensor> out;

 private:
  // The tensor itself the first time it is named, a copy (charged) every later time.
  Status take(Node& n, const std::string& name) {
    if (n.collected == SIZE_MAX) {
      n.collected = out.size();
      out.push_back(std::move(*n.tensor));
    } else {
      Tensor copy = out[n.collected];
      if (copy.values.size() > allowance_ - values_)
        return tooManyValues(values_ + copy.values.size(), allowance_, ar_);
      values_ += copy.values.size();
      out.push_back(std::move(copy));
    }
    out.back().name = name;
    return {};
  }

  const PtArchive& ar_;
  uint64_t allowance_, values_;
  uint64_t steps_ = 0, names_ = 0;
};

}  // namespace

bool isTorchZip(std::string_view bytes) { return bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4); }

Result<std::string> torchZipPickle(std::string_view bytes) {
  auto ar = readArchive(bytes, false);
  if (!ar) return ar.error();
  return std::move(ar->pickle);
}

Result<std::vector<Tensor>> parseTorchZip(std::string_view bytes, TensorBudget* budget) {
  TensorBudget own;
  if (!budget) budget = &own;
  auto ar = readArchive(bytes);
  if (!ar) return ar.error();
  uint64_t allowance = valueAllowance(*ar, budget->left());
  Machine m(*ar, allowance);
  auto root = m.run();
  if (!root) return root.error();
  Collector c(*ar, allowance, m.values());
  KDK_TRY_STATUS(c.walk(*root, "", 0));
  if (c.out.empty()) return Error::Invalid(".pt file holds no tensor");
  KDK_TRY_STATUS(budget->charge(c.values(), ".pt tensors"));
  return std::move(c.out);
}

}  // namespace kernodeck::record
