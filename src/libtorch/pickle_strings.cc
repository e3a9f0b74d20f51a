#include "kernodeck/libtorch/pickle_strings.h"

namespace kernodeck::libtorch {

namespace {
constexpr size_t kMaxString = 256;  // longer strings are no dictionary key anyone looks for
}  // namespace

void forEachPickleString(std::string_view pickle, const std::function<void(std::string_view)>& fn) {
  for (char op : {'\x8c', 'X'}) {  // SHORT_BINUNICODE: 1 length byte; BINUNICODE: 4, little-endian
    size_t header = op == 'X' ? 5 : 2;
    for (size_t at = pickle.find(op); at != std::string_view::npos && at + header <= pickle.size();
         at = pickle.find(op, at + 1)) {
      size_t n = 0;
      for (size_t b = 1; b < header; ++b)
        n |= static_cast<size_t>(static_cast<unsigned char>(pickle[at + b])) << (8 * (b - 1));
      if (n <= kMaxString && n <= pickle.size() - at - header) fn(pickle.substr(at + header, n));
    }
  }
}

}  // namespace kernodeck::libtorch
