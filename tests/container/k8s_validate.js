// Validates Kubernetes documents against the Kubernetes OpenAPI schemas with the pinned npm
// package kubernetes-models (tests/tools/npm), an implementation Kernodeck did not write.
// Input: a JSON file holding [{"file": NAME, "doc": OBJECT}, ...] (validate_manifests.py turns the
// YAML into it with PyYAML, since the npm folder holds no YAML parser). Prints one line per
// document, and exits 1 when any document fails or is of a kind this script cannot map.
"use strict";
const fs = require("fs");
const path = require("path");

const npm = process.env.KERNODECK_NPM_DIR || "/var/cache/kernodeck-test/npm";
const models = path.join(npm, "node_modules", "kubernetes-models");

// apiVersion "v1" is the core group (kubernetes-models/v1/KIND); "apps/v1" is kubernetes-models/apps/v1/KIND.
function modelFor(doc) {
  if (typeof doc.apiVersion !== "string" || typeof doc.kind !== "string" || !/^[A-Za-z]+$/.test(doc.kind)) return null;
  const file = path.join(models, ...doc.apiVersion.split("/"), doc.kind + ".js");
  if (!file.startsWith(models + path.sep) || !fs.existsSync(file)) return null;
  return require(file)[doc.kind] || null;
}

const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let failed = 0;
for (const { file, doc } of docs) {
  const Model = modelFor(doc);
  const what = `${file}: ${doc.apiVersion}/${doc.kind} ${doc.metadata && doc.metadata.name}`;
  if (!Model) {
    console.log(`FAIL ${what}: no kubernetes-models schema for this apiVersion and kind`);
    failed++;
    continue;
  }
  try {
    new Model(doc).validate();
    console.log(`ok   ${what}`);
  } catch (e) {
    console.log(`FAIL ${what}: ${String(e.message).slice(0, 400)}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
