// A dossier's signature: a DSSE envelope over its MANIFEST.sha256, in MANIFEST.sha256.dsse.
// The manifest alone only proves that the files match it; someone who can write the dossier
// can rewrite both. The signature ties the manifest, and through it every file, to a key that
// someone who can push to the registry or the shared folder does not hold.
#pragma once

#include <string>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/report/report.h"

namespace kernodeck::cli {

// The file beside the manifest, and the DSSE payload type of what it signs.
inline constexpr const char* kDossierSignatureFile = "MANIFEST.sha256.dsse";
inline constexpr const char* kDossierManifestType = "application/vnd.kernodeck.dossier-manifest.v1+text";

// Signs DIR/MANIFEST.sha256 with `key` into DIR/MANIFEST.sha256.dsse.
Status signDossier(const std::string& dir, const attest::Key& key);

// Whether DIR is signed by `key` over exactly `manifestText`: an error finding on `r`
// (dossier.unsigned, dossier.signature.invalid) when not, an info finding naming the key when
// it is. True when it verifies.
bool checkDossierSignature(const std::string& dir, const std::string& manifestText, const attest::Key& key,
                           report::Report& r);

}  // namespace kernodeck::cli
