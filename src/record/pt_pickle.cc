// See pt_pickle.h. The machine is pickle's own (a stack, MARKs, a memo), with one function per
// group of opcodes; every node it makes lives in its arena, so that memo references share one
// object and a cycle can neither leak nor recurse.
#include "pt_pickle.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "element_decode.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record::pt {

namespace {

// Work and memory are bounded by the file's own size wherever a count could multiply it: a
// memo reference costs two bytes and may name a whole subtree again, a zero stride repeats one
// element (pt_archive.cc bounds what a deflated entry expands to).
constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxMemo = 1u << 20;
constexpr size_t kMaxNodes = 1u << 20;
constexpr uint64_t kMaxItems = 1ull << 20;    // items put in containers, all together
constexpr uint64_t kMaxValues = 1ull << 27;   // tensor elements, all together (1 GiB of doubles)
constexpr uint64_t kFreeValues = 1ull << 20;  // elements any file may materialise, whatever its storage
constexpr uint64_t kValuesPerByte = 8;        // and this many more per byte of storage it holds
constexpr size_t kMaxRank = 16;

// The storage types torch.save names (torch.<name>), with their elements' type and size.
constexpr StorageType kStorageTypes[] = {{"FloatStorage", "float32", 4}, {"DoubleStorage", "float64", 8},
                                         {"HalfStorage", "float16", 2},  {"BFloat16Storage", "bfloat16", 2},
                                         {"IntStorage", "int32", 4},     {"LongStorage", "int64", 8},
                                         {"ShortStorage", "int16", 2},   {"CharStorage", "int8", 1},
                                         {"ByteStorage", "uint8", 1},    {"BoolStorage", "bool", 1}};

class Machine {
 public:
  Machine(const PtArchive& ar, uint64_t allowance) : ar_(ar), p_(ar.pickle), allowance_(allowance) {}

  // Elements materialised so far.
  uint64_t values() const { return values_; }
  // The nodes made so far, handed to the caller (the machine is done with them).
  std::vector<std::unique_ptr<Node>> release() { return std::move(arena_); }

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

  // One opcode: dispatched to its group, so that each group reads as the part of pickle it is.
  Result<bool> step(unsigned char op) {
    switch (op) {
      case 0x80:  // PROTO
      case 0x95:  // FRAME
      case 'c':   // GLOBAL
      case 0x93:  // STACK_GLOBAL
      case 'Q':   // BINPERSID
      case 'R':   // REDUCE
      case 'b':   // BUILD
        return objectStep(op);
      case '(':   // MARK
      case '}':   // EMPTY_DICT
      case ']':   // EMPTY_LIST
      case ')':   // EMPTY_TUPLE
      case 't':   // TUPLE
      case 0x85:  // TUPLE1
      case 0x86:  // TUPLE2
      case 0x87:  // TUPLE3
      case 's':   // SETITEM
      case 'u':   // SETITEMS
      case 'a':   // APPEND
      case 'e':   // APPENDS
        return containerStep(op);
      case 'q':   // BINPUT
      case 'r':   // LONG_BINPUT
      case 0x94:  // MEMOIZE
      case 'h':   // BINGET
      case 'j':   // LONG_BINGET
        return memoStep(op);
      case 'J':   // BININT
      case 'K':   // BININT1
      case 'M':   // BININT2
      case 0x8a:  // LONG1
      case 'G':   // BINFLOAT
      case 'N':   // NONE
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
      case 'X':   // BINUNICODE
      case 0x8c:  // SHORT_BINUNICODE
      case 0x8d:  // BINUNICODE8
        return scalarStep(op);
      default: return unknownOpcode(op);
    }
  }

  Error unknownOpcode(unsigned char op) const {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op);
    return fail(std::string("opcode ") + hex + " is not one torch.save emits");
  }

  // The framing, the globals and what calls them: the protocol, a frame, a global named inline
  // or from the stack, a storage by persistent id, a call, an object's state.
  Result<bool> objectStep(unsigned char op) {
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
      default: return unknownOpcode(op);
    }
  }

  // MARK, the empty containers, tuples, and the items put into dicts and lists.
  Result<bool> containerStep(unsigned char op) {
    switch (op) {
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
      default: return unknownOpcode(op);
    }
  }

  // The memo: the top of the stack kept under an index, and pushed again from it.
  Result<bool> memoStep(unsigned char op) {
    switch (op) {
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
      default: return unknownOpcode(op);
    }
  }

  // Ints, floats, None, booleans and strings, pushed as they are read.
  Result<bool> scalarStep(unsigned char op) {
    switch (op) {
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
      default: return unknownOpcode(op);
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

}  // namespace

uint64_t valueAllowance(const PtArchive& ar, uint64_t budgetLeft) {
  uint64_t perStorage = ar.storageBytes > (kMaxValues - kFreeValues) / kValuesPerByte
                            ? kMaxValues
                            : kFreeValues + kValuesPerByte * ar.storageBytes;
  return std::min({kMaxValues, perStorage, budgetLeft});
}

Error tooManyValues(uint64_t wanted, uint64_t allowance, const PtArchive& ar) {
  return Error::Invalid(".pt tensors would materialise " + std::to_string(wanted) + " elements from " +
                        std::to_string(ar.storageBytes) + " bytes of storage; the limit here is " +
                        std::to_string(allowance) +
                        " (2^20 plus 8 per storage byte, at most 2^27, within the command's 2^28; a tensor "
                        "named twice or with a zero stride counts each time)");
}

Result<Unpickled> unpickle(const PtArchive& ar, uint64_t allowance) {
  Machine m(ar, allowance);
  auto root = m.run();
  if (!root) return root.error();
  return Unpickled{*root, m.values(), m.release()};
}

}  // namespace kernodeck::record::pt
