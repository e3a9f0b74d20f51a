// A containers.conf line for its [engine] section that gives podman an empty hooks folder of its
// own: a host with kernodeck-hook registered (/usr/share/containers/oci/hooks.d,
// /etc/containers/oci/hooks.d) does not run it in the tests' containers (issue 51). Defined in
// support.cc.
#pragma once

#include <string>

namespace kdktest {

std::string noHostHooks();

}  // namespace kdktest
