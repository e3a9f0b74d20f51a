#!/usr/bin/env node
// Validates CycloneDX 1.5 JSON documents with the CycloneDX JavaScript library's strict JSON
// validator (its bundled schemas, additional properties refused). Prints each error and exits 1
// when a document is invalid.
// Usage: KERNODECK_NPM_DIR=/var/cache/kernodeck-test/npm node validate_cyclonedx.js FILE...
'use strict'
const fs = require('fs')
const path = require('path')
const npm = process.env.KERNODECK_NPM_DIR || '/var/cache/kernodeck-test/npm'
const CDX = require(path.join(npm, 'node_modules', '@cyclonedx', 'cyclonedx-library'))

async function main() {
  const validator = new CDX.Validation.JsonStrictValidator(CDX.Spec.Version.v1dot5)
  let failed = false
  for (const file of process.argv.slice(2)) {
    const errors = await validator.validate(fs.readFileSync(file, 'utf8'))
    if (errors === null) {
      process.stdout.write(`${file}: valid CycloneDX 1.5 (strict)\n`)
    } else {
      failed = true
      process.stdout.write(`${file}: invalid: ${JSON.stringify(errors, null, 1)}\n`)
    }
  }
  process.exit(failed ? 1 : 0)
}
main().catch((e) => {
  process.stderr.write(`validate_cyclonedx: ${e.stack || e}\n`)
  process.exit(2)
})
