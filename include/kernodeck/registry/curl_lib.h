// libcurl, opened with dlopen at its first use instead of linked, as oci/archive_lib.h opens
// libarchive: a command that talks to no registry (an audit of an OCI layout, an archive or a
// root filesystem; the hook's sibling commands) then never maps libcurl and its closure (GnuTLS,
// Kerberos, LDAP, SASL, libssh2, nghttp2, p11-kit, ...: 28 libraries, ~3.8 MiB resident and
// most of the dynamic loader's work at start, docs/performance.md).
//
// Include this header instead of <curl/curl.h>: it includes it for the types and constants,
// then maps each curl_* function this project calls to the member of a table filled once with
// dlsym (curl.h's own three-argument macros for curl_easy_setopt/getinfo are replaced; its type
// checks are for C only). A function used without being listed is a link error, not a silent
// fallback. When libcurl cannot be loaded, the first use prints one
// line naming it and exits with 3 (could not complete), as a missing linked library would stop
// the program before it started.
#pragma once

#include <curl/curl.h>

// Every libcurl function called in src/ (X-macro: X(name)).
#define KDK_CURL_FUNCTIONS(X)                                                                            \
  X(curl_easy_cleanup)                                                                                   \
  X(curl_easy_escape) X(curl_easy_getinfo) X(curl_easy_init) X(curl_easy_perform) X(curl_easy_reset)    \
      X(curl_easy_setopt) X(curl_easy_strerror) X(curl_free) X(curl_global_init) X(curl_slist_append)    \
          X(curl_slist_free_all) X(curl_url) X(curl_url_cleanup) X(curl_url_get) X(curl_url_set)

namespace kernodeck::registry::curl_lib {

// The table of libcurl's functions, one member per name above.
struct Api {
#define KDK_CURL_MEMBER(name) decltype(&::name) name = nullptr;
  KDK_CURL_FUNCTIONS(KDK_CURL_MEMBER)
#undef KDK_CURL_MEMBER
};

// The table, libcurl opened, every function resolved and curl_global_init called on the first
// call (thread-safe); exits with 3 and one line on stderr when that fails.
const Api& api();

}  // namespace kernodeck::registry::curl_lib

// Each call site's curl_foo(...) becomes (api().curl_foo)(...); curl_lib.cc, which fills the
// table with the real names, defines KDK_CURL_LIB_IMPL.
#ifndef KDK_CURL_LIB_IMPL
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (::kernodeck::registry::curl_lib::api().curl_easy_cleanup)
#define curl_easy_escape (::kernodeck::registry::curl_lib::api().curl_easy_escape)
#define curl_easy_getinfo (::kernodeck::registry::curl_lib::api().curl_easy_getinfo)
#define curl_easy_init (::kernodeck::registry::curl_lib::api().curl_easy_init)
#define curl_easy_perform (::kernodeck::registry::curl_lib::api().curl_easy_perform)
#define curl_easy_reset (::kernodeck::registry::curl_lib::api().curl_easy_reset)
#define curl_easy_setopt (::kernodeck::registry::curl_lib::api().curl_easy_setopt)
#define curl_easy_strerror (::kernodeck::registry::curl_lib::api().curl_easy_strerror)
#define curl_free (::kernodeck::registry::curl_lib::api().curl_free)
#define curl_slist_append (::kernodeck::registry::curl_lib::api().curl_slist_append)
#define curl_slist_free_all (::kernodeck::registry::curl_lib::api().curl_slist_free_all)
#define curl_url (::kernodeck::registry::curl_lib::api().curl_url)
#define curl_url_cleanup (::kernodeck::registry::curl_lib::api().curl_url_cleanup)
#define curl_url_get (::kernodeck::registry::curl_lib::api().curl_url_get)
#define curl_url_set (::kernodeck::registry::curl_lib::api().curl_url_set)
#endif
