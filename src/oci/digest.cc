#include "kernodeck/oci/digest.h"

namespace kernodeck::oci {
namespace {

bool isAlgComponentChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool isAlgSeparator(char c) { return c == '+' || c == '.' || c == '_' || c == '-'; }
bool isEncodedChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '=' || c == '_' || c == '-';
}
bool isLowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

Result<Digest> parseDigest(std::string_view s) {
  auto bad = [&](const std::string& why) {
    return Error::Invalid("invalid digest '" + std::string(s.substr(0, 200)) + "': " + why);
  };
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return bad("missing ':'");
  std::string_view alg = s.substr(0, colon), enc = s.substr(colon + 1);
  if (alg.empty()) return bad("empty algorithm");
  // algorithm := component (separator component)*
  bool expectComponent = true;
  for (char c : alg) {
    if (isAlgComponentChar(c)) {
      expectComponent = false;
    } else if (isAlgSeparator(c)) {
      if (expectComponent) return bad("bad algorithm separator");
      expectComponent = true;
    } else {
      return bad("bad character in algorithm");
    }
  }
  if (expectComponent) return bad("algorithm ends with a separator");
  if (enc.empty()) return bad("empty encoded part");
  for (char c : enc)
    if (!isEncodedChar(c)) return bad("bad character in encoded part");
  if (alg == "sha256" && (enc.size() != 64 || !isLowerHex(enc))) return bad("sha256 needs 64 lower-case hex digits");
  if (alg == "sha512" && (enc.size() != 128 || !isLowerHex(enc))) return bad("sha512 needs 128 lower-case hex digits");
  return Digest{std::string(alg), std::string(enc)};
}

}  // namespace kernodeck::oci
