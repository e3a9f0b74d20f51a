// /etc/os-release (os-release(5)): KEY=VALUE lines, values optionally quoted.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace kernodeck::os {

std::map<std::string, std::string> parseOsRelease(std::string_view text);

}  // namespace kernodeck::os
