// Text for the HTML pages Kernodeck writes (audit, dossier, fleet summary).
#pragma once

#include <string>
#include <string_view>

namespace kernodeck::util {

// `s` as HTML text or attribute value: & < > " ' escaped.
std::string htmlEscape(std::string_view s);

}  // namespace kernodeck::util
