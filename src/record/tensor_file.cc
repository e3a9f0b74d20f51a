#include "kernodeck/record/tensor_file.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "element_decode.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status TensorBudget::charge(uint64_t n, std::string_view what) {
  if (n > left_)
    return Error::Invalid(std::string(what) + " would hold " + std::to_string(n) + " elements where " +
                          std::to_string(left_) + " are left of the " + std::to_string(limit_) +
                          " one command may read (each kept as a double)");
  left_ -= n;
  return {};
}

namespace {

constexpr uint64_t kMaxBytes = 1ull << 30;
constexpr size_t kMaxHeaderValues = 1u << 20;  // JSON values in a safetensors header
constexpr int kMaxHeaderDepth = 8;             // its nesting: {"t": {"shape": [..]}} is 3

// A safetensors header parsed with its values counted and its nesting bounded as they arrive, so
// a header of small values or deep brackets cannot grow a tree many times its size.
Result<nlohmann::json> parseHeader(std::string_view text) {
  struct Limit {};
  size_t values = 0;
  using Event = nlohmann::json::parse_event_t;
  auto cb = [&](int depth, Event event, nlohmann::json&) {
    bool isValue = event == Event::value || event == Event::object_start || event == Event::array_start;
    if (depth > kMaxHeaderDepth || (isValue && ++values > kMaxHeaderValues)) throw Limit{};
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), cb, false);
  } catch (const Limit&) {
    return Error::Invalid("safetensors header holds more than " + std::to_string(kMaxHeaderValues) +
                          " JSON values or nests deeper than " + std::to_string(kMaxHeaderDepth));
  }
}

double halfToDouble(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

double bf16ToDouble(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Element size and a decoder for (kind, size, byte order); empty dtype when unsupported.
struct Decoder {
  std::string dtype;
  size_t size = 0;
  bool bigEndian = false;
  double decode(const unsigned char* p) const {
    unsigned char b[8];
    for (size_t i = 0; i < size; ++i) b[i] = bigEndian ? p[size - 1 - i] : p[i];
    if (dtype == "float64") {
      double v;
      std::memcpy(&v, b, 8);
      return v;
    }
    if (dtype == "float32") {
      float v;
      std::memcpy(&v, b, 4);
      return v;
    }
    if (dtype == "float16") {
      uint16_t v;
      std::memcpy(&v, b, 2);
      return halfToDouble(v);
    }
    if (dtype == "bfloat16") {
      uint16_t v;
      std::memcpy(&v, b, 2);
      return bf16ToDouble(v);
    }
    if (dtype == "bool") return b[0] ? 1 : 0;
    bool isSigned = dtype[0] == 'i';
    uint64_t u = 0;
    for (size_t i = 0; i < size; ++i) u |= static_cast<uint64_t>(b[i]) << (8 * i);
    if (isSigned && size < 8 && (u >> (8 * size - 1)) & 1) u |= ~0ull << (8 * size);
    return isSigned ? static_cast<double>(static_cast<int64_t>(u)) : static_cast<double>(u);
  }
};

Decoder decoderFor(char kind, size_t size, bool bigEndian) {
  Decoder d;
  d.size = size;
  d.bigEndian = bigEndian;
  if (kind == 'f' && (size == 2 || size == 4 || size == 8))
    d.dtype = "float" + std::to_string(size * 8);
  else if (kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8))
    d.dtype = "int" + std::to_string(size * 8);
  else if (kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8))
    d.dtype = "uint" + std::to_string(size * 8);
  else if (kind == 'b' && size == 1)
    d.dtype = "bool";
  return d;
}

// Converts Fortran-order values to C order.
std::vector<double> fortranToC(const std::vector<double>& f, const std::vector<int64_t>& shape) {
  std::vector<double> c(f.size());
  size_t nd = shape.size();
  std::vector<int64_t> idx(nd, 0);
  for (size_t lin = 0; lin < f.size(); ++lin) {
    // idx is the C-order multi-index of `lin`; its Fortran offset:
    int64_t off = 0, stride = 1;
    for (size_t k = 0; k < nd; ++k) {
      off += idx[k] * stride;
      stride *= shape[k];
    }
    c[lin] = f[static_cast<size_t>(off)];
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return c;
}

bool isRegexSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// After KEY (quoted, as 'key') at `at`: spaces, ':', spaces; the position of what follows, or npos.
size_t afterKey(std::string_view h, size_t at, std::string_view key) {
  size_t i = at + key.size();
  while (i < h.size() && isRegexSpace(h[i])) ++i;
  if (i >= h.size() || h[i] != ':') return std::string_view::npos;
  ++i;
  while (i < h.size() && isRegexSpace(h[i])) ++i;
  return i;
}

// Calls `match(pos)` at the value of each occurrence of KEY, first to last, until it returns true:
// the first occurrence whose value has the expected form wins, as a regex search for the whole
// pattern would choose. Linear in the header's length whatever it holds.
template <typename F>
void eachKey(std::string_view h, std::string_view key, F match) {
  for (size_t at = h.find(key); at != std::string_view::npos; at = h.find(key, at + 1))
    if (size_t v = afterKey(h, at, key); v != std::string_view::npos && match(v)) return;
}

}  // namespace

NpyHeader scanNpyHeader(std::string_view h) {
  NpyHeader out;
  // 'descr': '<f8' (an order, a kind of f i u b, digits)
  eachKey(h, "'descr'", [&](size_t v) {
    if (v + 3 > h.size() || h[v] != '\'' || std::string_view("<>|=").find(h[v + 1]) == std::string_view::npos ||
        std::string_view("fiub").find(h[v + 2]) == std::string_view::npos)
      return false;
    size_t d = v + 3, e = d;
    while (e < h.size() && h[e] >= '0' && h[e] <= '9') ++e;
    if (e == d || e >= h.size() || h[e] != '\'') return false;
    out.descr = NpyHeader::Descr{h[v + 1], h[v + 2], std::string(h.substr(d, e - d)), std::string(h.substr(v, e + 1 - v))};
    return true;
  });
  eachKey(h, "'fortran_order'", [&](size_t v) {
    if (h.substr(v, 4) == "True") return out.fortran = true, true;
    if (h.substr(v, 5) == "False") return out.fortran = false, true;
    return false;
  });
  eachKey(h, "'shape'", [&](size_t v) {
    if (v >= h.size() || h[v] != '(') return false;
    size_t close = h.find(')', v + 1);
    if (close == std::string_view::npos) return false;
    out.shape = std::string(h.substr(v + 1, close - v - 1));
    return true;
  });
  return out;
}

double decodeLittleEndian(std::string_view dtype, size_t size, const unsigned char* p) {
  return Decoder{std::string(dtype), size, false}.decode(p);
}

Result<Tensor> parseNpy(std::string_view b, TensorBudget* budget) {
  TensorBudget own;
  if (!budget) budget = &own;
  if (b.size() < 10 || b.substr(0, 6) != "\x93NUMPY") return Error::Invalid("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(b[6]);
  size_t headerLen, off;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return Error::Invalid(".npy header is truncated");
    headerLen = static_cast<size_t>(static_cast<unsigned char>(b[8])) |
                (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8) |
                (static_cast<size_t>(static_cast<unsigned char>(b[10])) << 16) |
                (static_cast<size_t>(static_cast<unsigned char>(b[11])) << 24);
    off = 12;
  } else {
    return Error::Unsupported(".npy format version " + std::to_string(major) + " is not supported");
  }
  if (headerLen > 1 << 20 || off + headerLen > b.size()) return Error::Invalid(".npy header is truncated");
  std::string_view header = b.substr(off, headerLen);
  NpyHeader h = scanNpyHeader(header);
  if (!h.descr)
    return Error::Unsupported(".npy dtype is not a plain numeric type: " + util::printable(header, 120));
  auto sz = util::parseUint(h.descr->size);
  Decoder dec = decoderFor(h.descr->kind, sz ? static_cast<size_t>(*sz) : 0, h.descr->order == '>');
  if (dec.dtype.empty()) return Error::Unsupported(".npy dtype " + util::printable(h.descr->text, 120) + " is not supported");
  if (!h.fortran || !h.shape) return Error::Invalid(".npy header lacks fortran_order or shape");
  Tensor t;
  t.dtype = dec.dtype;
  for (const auto& p : util::split(*h.shape, ',')) {
    std::string_view x = util::trim(p);
    if (x.empty()) continue;
    auto n = util::parseUint(x);
    if (!n || *n > (1ull << 40)) return Error::Invalid(".npy shape is invalid");
    t.shape.push_back(static_cast<int64_t>(*n));
  }
  if (t.shape.size() > 8) return Error::Unsupported(".npy has more than 8 dimensions");
  uint64_t count = 1;
  for (int64_t d : t.shape) {
    if (d != 0 && count > kMaxBytes / static_cast<uint64_t>(d)) return Error::Invalid(".npy is too large");
    count *= static_cast<uint64_t>(d);
  }
  if (count * dec.size > kMaxBytes) return Error::Invalid(".npy is too large");
  size_t data = off + headerLen;
  if (b.size() - data < count * dec.size)
    return Error::Invalid(".npy data is truncated: " + std::to_string(b.size() - data) + " bytes for " +
                          std::to_string(count) + " elements");
  KDK_TRY_STATUS(budget->charge(count, ".npy"));
  t.values.resize(count);
  auto* p = reinterpret_cast<const unsigned char*>(b.data() + data);
  for (uint64_t i = 0; i < count; ++i) t.values[i] = dec.decode(p + i * dec.size);
  if (*h.fortran && t.shape.size() > 1) t.values = fortranToC(t.values, t.shape);
  return t;
}

Result<std::vector<Tensor>> parseSafetensors(std::string_view b, TensorBudget* budget) {
  TensorBudget own;
  if (!budget) budget = &own;
  if (b.size() < 8) return Error::Invalid("safetensors file is shorter than its header length");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(b[i])) << (8 * i);
  if (n > (100u << 20) || 8 + n > b.size())
    return Error::Invalid("safetensors header length " + std::to_string(n) + " is invalid");
  KDK_TRY_ASSIGN(auto j, parseHeader(b.substr(8, n)));
  if (!j.is_object()) return Error::Invalid("safetensors header is not a JSON object");
  std::string_view data = b.substr(8 + n);
  std::vector<Tensor> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& v = it.value();
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") ||
        !v["dtype"].is_string() || !v["shape"].is_array() || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2)
      return Error::Invalid("safetensors entry '" + util::printable(it.key(), 80) + "' is malformed");
    std::string dt = v["dtype"].get<std::string>();
    static const std::map<std::string, std::pair<char, size_t>> types = {
        {"F64", {'f', 8}}, {"F32", {'f', 4}}, {"F16", {'f', 2}}, {"I64", {'i', 8}},
        {"I32", {'i', 4}}, {"I16", {'i', 2}}, {"I8", {'i', 1}},  {"U64", {'u', 8}},
        {"U32", {'u', 4}}, {"U16", {'u', 2}}, {"U8", {'u', 1}},  {"BOOL", {'b', 1}}};
    Decoder dec;
    if (dt == "BF16")
      dec = Decoder{"bfloat16", 2, false};
    else if (auto t = types.find(dt); t != types.end())
      dec = decoderFor(t->second.first, t->second.second, false);
    if (dec.dtype.empty())
      return Error::Unsupported("safetensors dtype " + util::printable(dt, 20) + " is not supported");
    Tensor t;
    t.name = it.key();
    t.dtype = dec.dtype;
    uint64_t count = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40))
        return Error::Invalid("safetensors shape of '" + t.name + "' is invalid");
      t.shape.push_back(d.get<int64_t>());
      count *= d.get<uint64_t>();
      if (count > kMaxBytes) return Error::Invalid("safetensors tensor '" + t.name + "' is too large");
    }
    if (!v["data_offsets"][0].is_number_unsigned() || !v["data_offsets"][1].is_number_unsigned())
      return Error::Invalid("safetensors offsets of '" + t.name + "' are invalid");
    uint64_t begin = v["data_offsets"][0].get<uint64_t>(), end = v["data_offsets"][1].get<uint64_t>();
    if (begin > end || end > data.size() || end - begin != count * dec.size)
      return Error::Invalid("safetensors offsets of '" + t.name + "' do not match its shape and dtype");
    KDK_TRY_STATUS(budget->charge(count, "safetensors tensor '" + util::printable(t.name, 80) + "'"));
    t.values.resize(count);
    auto* p = reinterpret_cast<const unsigned char*>(data.data() + begin);
    for (uint64_t i = 0; i < count; ++i) t.values[i] = dec.decode(p + i * dec.size);
    out.push_back(std::move(t));
  }
  return out;
}

std::string writeNpy(const Tensor& t) {
  bool f32 = t.dtype == "float32";
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
  std::string header =
      "{'descr': '<f" + std::string(f32 ? "4" : "8") + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  for (double v : t.values) {
    if (f32) {
      float f = static_cast<float>(v);
      out.append(reinterpret_cast<const char*>(&f), 4);
    } else {
      out.append(reinterpret_cast<const char*>(&v), 8);
    }
  }
  return out;
}

Result<std::vector<std::string>> parseIds(std::string_view text, const std::string& fileName) {
  std::vector<std::string> ids;
  if (fileName.ends_with(".json")) {
    KDK_TRY_STATUS(util::checkJsonNesting(text, fileName));
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) return Error::Invalid(fileName + " is not a JSON array of ids");
    for (const auto& v : j) {
      if (v.is_string())
        ids.push_back(v.get<std::string>());
      else if (v.is_number_integer())
        ids.push_back(std::to_string(v.get<int64_t>()));
      else
        return Error::Invalid(fileName + " holds an id that is neither a string nor an integer");
    }
    return ids;
  }
  bool csv = fileName.ends_with(".csv");
  bool first = true;
  for (const auto& raw : util::split(text, '\n')) {
    std::string line(util::trim(raw));
    if (line.empty()) continue;
    if (csv) line = std::string(util::trim(line.substr(0, line.find(','))));
    if (first && csv && util::toLower(line) == "id") {
      first = false;
      continue;
    }
    first = false;
    ids.push_back(line);
  }
  return ids;
}

}  // namespace kernodeck::record
