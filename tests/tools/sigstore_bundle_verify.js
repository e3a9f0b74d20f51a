#!/usr/bin/env node
// Sigstore's own verifier over a bundle Kernodeck attached, offline and apart from Kernodeck:
// @sigstore/bundle's bundleFromJSON reads it (and checks its shape as protobuf-specs defines
// v0.3), @sigstore/verify's Verifier verifies it with trust material made of an empty trusted
// root and the public key under the hint computed here from the PEM (base64 of the SHA-256 of
// the DER SubjectPublicKeyInfo, as cosign and sigstore-go compute it), no transparency log, no
// certificate transparency log, no timestamp (tlogThreshold, ctlogThreshold, tsaThreshold 0):
// how `cosign verify-attestation --key --insecure-ignore-tlog` checks a key-signed bundle.
// Usage: node sigstore_bundle_verify.js BUNDLE.json PUBLIC_KEY.pem [tamper]
// With `tamper`, one byte of the DSSE payload is changed first (the verifier must refuse it).
// Prints a JSON summary {hint, bundleHint, predicateType, subjects, verified, error}; exits 0 when
// the bundle verifies, 1 when it does not, 2 on usage or unreadable input.
'use strict';

const fs = require('fs');
const nodeCrypto = require('crypto');
const path = require('path');
const npmDir = process.env.KERNODECK_NPM_DIR || '/var/cache/kernodeck-test/npm';
const req = (name) => require(path.join(npmDir, 'node_modules', name));
const {bundleFromJSON} = req('@sigstore/bundle');
const {Verifier, toTrustMaterial, toSignedEntity} = req('@sigstore/verify');

function main() {
  const [bundlePath, keyPath, mode] = process.argv.slice(2);
  if (!bundlePath || !keyPath) {
    console.error('usage: sigstore_bundle_verify.js BUNDLE.json PUBLIC_KEY.pem [tamper]');
    return 2;
  }
  let json, der;
  try {
    json = JSON.parse(fs.readFileSync(bundlePath, 'utf8'));
    der = nodeCrypto.createPublicKey(fs.readFileSync(keyPath)).export({type: 'spki', format: 'der'});
  } catch (e) {
    console.error('sigstore_bundle_verify: ' + e.message);
    return 2;
  }
  const hint = nodeCrypto.createHash('sha256').update(der).digest('base64');
  const out = {hint, bundleHint: null, predicateType: null, subjects: null, verified: false, error: null};
  try {
    out.bundleHint = json.verificationMaterial?.publicKey?.hint ?? null;
    if (mode === 'tamper') {
      const payload = Buffer.from(json.dsseEnvelope.payload, 'base64');
      payload[payload.length >> 1] ^= 0x01;
      json.dsseEnvelope.payload = payload.toString('base64');
    }
    const bundle = bundleFromJSON(json);
    const statement = JSON.parse(Buffer.from(json.dsseEnvelope.payload, 'base64').toString('utf8'));
    out.predicateType = statement.predicateType ?? null;
    out.subjects = statement.subject ?? null;
    const trust = toTrustMaterial(
        {mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1', tlogs: [],
          certificateAuthorities: [], ctlogs: [], timestampAuthorities: []},
        {[hint]: {rawBytes: der, keyDetails: undefined, validFor: undefined}});
    const verifier = new Verifier(trust, {tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0});
    verifier.verify(toSignedEntity(bundle));
    out.verified = true;
  } catch (e) {
    out.error = (e.code ? e.code + ': ' : '') + e.message;
  }
  console.log(JSON.stringify(out));
  return out.verified ? 0 : 1;
}

process.exitCode = main();
