#!/usr/bin/env node
// cosign's attestation lookup (the legacy `.att` layout that `cosign verify-attestation`,
// Kyverno's verifyImages and Sigstore's policy-controller read), written apart from Kernodeck
// on @sigstore/core (PAE, signature verification) and Node's own HTTP and hashing:
//   1. resolve IMAGE (a tag or digest) to the digest of the manifest the registry serves,
//   2. fetch the manifest under the tag sha256-<hex>.att and each of its layers (digest checked),
//   3. for each layer: media type application/vnd.dsse.envelope.v1+json, a predicateType
//      annotation; the DSSE signature over PAE(payloadType, payload) verified with the public
//      key; the in-toto Statement's subject digest equal to the image digest and its
//      predicateType equal to the annotation and to the type asked for.
// Usage: node cosign_lookup.js REGISTRY REPOSITORY IMAGE_REF PUBLIC_KEY.pem PREDICATE_TYPE
// Prints a JSON summary (one entry per layer, with why it does not count); exits 0 when at least
// one layer of the type verifies (cosign's "verified attestations"), 1 when none does, 2 on
// usage or lookup errors (no .att tag, registry unreachable).
'use strict';

const http = require('http');
const nodeCrypto = require('crypto');
const path = require('path');
const npmDir = process.env.KERNODECK_NPM_DIR || '/var/cache/kernodeck-test/npm';
const sigstore = require(path.join(npmDir, 'node_modules', '@sigstore', 'core'));

const DSSE = 'application/vnd.dsse.envelope.v1+json';
const ACCEPT = [
  'application/vnd.oci.image.manifest.v1+json', 'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

function get(url, accept) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {headers: accept ? {Accept: accept} : {}}, (res) => {
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        res.resume();
        resolve(get(new URL(res.headers.location, url).toString(), accept));
        return;
      }
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks)}));
    });
    req.on('error', reject);
    req.setTimeout(20000, () => req.destroy(new Error('timed out: ' + url)));
  });
}

function sha256(buf) {
  return 'sha256:' + nodeCrypto.createHash('sha256').update(buf).digest('hex');
}

// What node's crypto.verify takes as the algorithm for this key type.
function algorithmFor(key) {
  return key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
}

function checkLayer(layer, blob, key, imageDigest, wantType) {
  const out = {digest: layer.digest, predicateType: (layer.annotations || {}).predicateType || null};
  if (layer.mediaType !== DSSE) return {...out, counts: false, why: 'media type ' + layer.mediaType};
  if (!out.predicateType) return {...out, counts: false, why: 'no predicateType annotation'};
  if (sha256(blob) !== layer.digest) return {...out, counts: false, why: 'blob digest mismatch'};
  let env;
  try {
    env = JSON.parse(blob.toString('utf8'));
  } catch (e) {
    return {...out, counts: false, why: 'envelope is not JSON'};
  }
  if (typeof env.payloadType !== 'string' || typeof env.payload !== 'string' || !Array.isArray(env.signatures))
    return {...out, counts: false, why: 'not a DSSE envelope'};
  const payload = Buffer.from(env.payload, 'base64');
  const pae = sigstore.dsse.preAuthEncoding(env.payloadType, payload);
  const verified = env.signatures.some(
      (s) => typeof s.sig === 'string' &&
          sigstore.crypto.verify(pae, key, Buffer.from(s.sig, 'base64'), algorithmFor(key)));
  out.signatures = env.signatures.length;
  if (!verified) return {...out, counts: false, why: 'no signature verifies with the key'};
  let st;
  try {
    st = JSON.parse(payload.toString('utf8'));
  } catch (e) {
    return {...out, counts: false, why: 'payload is not JSON'};
  }
  if (env.payloadType !== 'application/vnd.in-toto+json') return {...out, counts: false, why: 'payload type'};
  if (st._type !== 'https://in-toto.io/Statement/v1' && st._type !== 'https://in-toto.io/Statement/v0.1')
    return {...out, counts: false, why: 'not an in-toto statement'};
  if (st.predicateType !== out.predicateType) return {...out, counts: false, why: 'predicateType differs from annotation'};
  const hex = imageDigest.slice('sha256:'.length);
  if (!Array.isArray(st.subject) || !st.subject.some((s) => s && s.digest && s.digest.sha256 === hex))
    return {...out, counts: false, why: 'subject is not the image'};
  if (st.predicateType !== wantType) return {...out, counts: false, why: 'another predicate type'};
  out.predicate = st.predicate;
  return {...out, counts: true, why: 'verified'};
}

async function main() {
  const [registry, repository, ref, keyFile, wantType] = process.argv.slice(2);
  if (!wantType) {
    console.error('usage: cosign_lookup.js REGISTRY REPOSITORY IMAGE_REF PUBLIC_KEY.pem PREDICATE_TYPE');
    return 2;
  }
  const key = sigstore.crypto.createPublicKey(require('fs').readFileSync(keyFile, 'utf8'));
  const base = 'http://' + registry + '/v2/' + repository;
  const image = await get(base + '/manifests/' + ref, ACCEPT);
  if (image.status !== 200) {
    console.error('image ' + ref + ': HTTP ' + image.status);
    return 2;
  }
  const imageDigest = sha256(image.body);
  if (image.headers['docker-content-digest'] && image.headers['docker-content-digest'] !== imageDigest) {
    console.error('the registry names another digest than the manifest bytes hash to');
    return 2;
  }
  const tag = imageDigest.replace(':', '-') + '.att';
  const att = await get(base + '/manifests/' + tag, ACCEPT);
  if (att.status !== 200) {
    console.error('no attestations: ' + tag + ': HTTP ' + att.status);
    return 2;
  }
  const manifest = JSON.parse(att.body.toString('utf8'));
  const results = [];
  for (const layer of manifest.layers || []) {
    const blob = await get(base + '/blobs/' + layer.digest);
    if (blob.status !== 200) {
      results.push({digest: layer.digest, counts: false, why: 'blob HTTP ' + blob.status});
      continue;
    }
    results.push(checkLayer(layer, blob.body, key, imageDigest, wantType));
  }
  const verified = results.filter((r) => r.counts).length;
  console.log(JSON.stringify({image_digest: imageDigest, tag, manifest_media_type: manifest.mediaType, layers: results,
                              verified}));
  return verified > 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => {
  console.error(String(e && e.message ? e.message : e));
  process.exit(2);
});
