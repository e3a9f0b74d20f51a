// DSSE envelopes and signing keys, as attest names them: the code lives in util/dsse.h (the
// shared layer results in registry, below attest, are signed with the same envelopes and keys).
#pragma once

#include "kernodeck/util/dsse.h"

namespace kernodeck::attest {

// The media type of a DSSE envelope stored as a blob (a referrer's or cosign layout's layer).
inline constexpr const char* kDsseMediaType = "application/vnd.dsse.envelope.v1+json";

using util::Envelope;
using util::Key;
using util::pae;
using util::parseEnvelope;
using util::serializeEnvelope;
using util::Signature;
using util::signEnvelope;
using util::verifyEnvelope;

}  // namespace kernodeck::attest
