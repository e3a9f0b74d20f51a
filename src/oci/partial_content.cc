// See partial_content.h.
#include "kernodeck/oci/partial_content.h"

namespace kernodeck::oci {

bool isPartialContent(std::string_view content) {
  return content.starts_with("kernodeck kept bytes v1\n") || content.starts_with("kernodeck gpu code v1\n");
}

}  // namespace kernodeck::oci
