// Judges container/k8s/admission/kyverno-ivpol.yaml with code Kernodeck did not write:
//   schema: the policy validates against Kyverno's own CRD schema for ImageValidatingPolicy
//     (tests/container/kyverno/imagevalidatingpolicy-v1.19.0.json, from kyverno/kyverno at the
//     tag it names), with ajv (npm), unknown fields refused as `kubectl apply --validate=strict`
//     refuses them (a CRD's structural schema would otherwise prune a misspelt field silently);
//   cel: each case's image is admitted when every validation expression of the policy is true,
//     evaluated by @bufbuild/cel (npm) with Kyverno's bindings (`images`: kind -> image strings,
//     `attestations`, `attestors`) and Kyverno's functions as they behave once the signature is
//     verified: extractPayload(image, attestation) returns the case's in-toto statement (Kyverno
//     returns the verified statement), verifyAttestationSignatures(...) returns 1 (the signature
//     itself is judged by Sigstore's verifier, tests/tools/sigstore_bundle_verify.js), time.now()
//     the case's `now`.
// Input: a JSON file {"policy": OBJECT, "cases": [{"name", "image", "now", "statement"}]}
// (PyYAML or the test turns the YAML into JSON: the npm folder holds no YAML parser).
// Prints {"schema": {"valid", "errors"}, "cases": [{"name", "admitted", "failed": [messages], "errors"}]}
// and exits 0; 2 on unreadable input.
"use strict";
const fs = require("fs");
const path = require("path");

const npm = process.env.KERNODECK_NPM_DIR || "/var/cache/kernodeck-test/npm";
const mod = (p) => require(path.join(npm, "node_modules", p));
const Ajv = mod("ajv").default || mod("ajv");
const celDist = path.join(npm, "node_modules", "@bufbuild", "cel", "dist", "cjs");
const cel = require(path.join(celDist, "index.js"));
const celTypes = require(path.join(celDist, "type.js"));
const { createTimestamp } = require(path.join(celDist, "timestamp.js"));

const crdFile = path.join(__dirname, "kyverno", "imagevalidatingpolicy-v1.19.0.json");

// Kubernetes' structural schema as JSON Schema: objects with properties and no
// x-kubernetes-preserve-unknown-fields take nothing else; int-or-string takes either.
function strict(schema) {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k.startsWith("x-kubernetes-") || k === "description" || k === "default") continue;
    out[k] = k === "properties" || k === "patternProperties"
      ? Object.fromEntries(Object.entries(v).map(([n, s]) => [n, strict(s)]))
      : strict(v);
  }
  if (schema["x-kubernetes-int-or-string"]) {
    delete out.type;
    out.anyOf = [{ type: "integer" }, { type: "string" }];
  }
  if (out.type === "object" && out.properties && !schema["x-kubernetes-preserve-unknown-fields"] &&
      out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

function validateSchema(policy) {
  const crd = JSON.parse(fs.readFileSync(crdFile, "utf8"));
  const schema = strict(crd.openAPIV3Schema);
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
  const validate = ajv.compile(schema);
  const errors = [];
  if (policy.apiVersion !== `${crd.group}/${crd.version}`) errors.push(`apiVersion is not ${crd.group}/${crd.version}`);
  if (policy.kind !== crd.kind) errors.push(`kind is not ${crd.kind}`);
  if (!validate(policy))
    for (const e of validate.errors) errors.push(`${e.instancePath || "/"} ${e.message}${e.params && e.params.additionalProperty ? ": " + e.params.additionalProperty : ""}`);
  return { valid: errors.length === 0, errors, crd: `${crd.source} ${crd.tag} (${crd.commit})` };
}

function evaluate(policy, c) {
  const nowMs = Date.parse(c.now);
  const funcs = [
    cel.celFunc("time.now", [], celTypes.TIMESTAMP, () =>
      createTimestamp(BigInt(Math.floor(nowMs / 1000)), (nowMs % 1000) * 1e6)),
    cel.celFunc("extractPayload", [cel.CelScalar.STRING, cel.CelScalar.STRING], cel.CelScalar.DYN, () => c.statement),
    cel.celFunc("verifyAttestationSignatures", [cel.CelScalar.STRING, cel.CelScalar.STRING, cel.listType(cel.CelScalar.DYN)],
      cel.CelScalar.INT, () => 1n),
  ];
  const names = (list) => new Map((list || []).map((x) => [x.name, x.name]));
  const bindings = {
    images: new Map([["containers", [c.image]], ["initContainers", []]]),
    attestations: names(policy.spec.attestations),
    attestors: new Map((policy.spec.attestors || []).map((a) => [a.name, new Map([["name", a.name]])])),
  };
  const failed = [], errors = [];
  for (const v of policy.spec.validations) {
    const r = cel.run(v.expression, bindings, { funcs });
    if (cel.isCelError(r)) errors.push(`${v.message}: ${r.message}`);
    else if (r !== true) failed.push(v.message);
  }
  // An error is a denial (failurePolicy: Fail).
  return { name: c.name, admitted: failed.length === 0 && errors.length === 0, failed, errors };
}

let input;
try {
  input = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
} catch (e) {
  console.error("kyverno_ivpol.js: " + e.message);
  process.exit(2);
}
console.log(JSON.stringify({
  schema: validateSchema(input.policy),
  cases: (input.cases || []).map((c) => evaluate(input.policy, c)),
}));
