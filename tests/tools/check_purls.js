#!/usr/bin/env node
// Parses every package URL of CycloneDX and SPDX JSON documents with packageurl-js (the
// purl-spec's JavaScript implementation, not Kernodeck's) and prints what it read, one JSON
// object per document: {"file", "purls": [{"purl", "type", "namespace", "name", "version",
// "qualifiers"}], "errors": [...]}. Exits 1 when a purl does not parse, when a deb, rpm or apk
// purl lacks its arch or distro qualifier, or when a document has no purl at all.
// Usage: KERNODECK_NPM_DIR=/var/cache/kernodeck-test/npm node check_purls.js FILE...
'use strict'
const fs = require('fs')
const path = require('path')
const npm = process.env.KERNODECK_NPM_DIR || '/var/cache/kernodeck-test/npm'
const { PackageURL } = require(path.join(npm, 'node_modules', 'packageurl-js'))

function purlsOf(doc) {
  const out = []
  if (doc.bomFormat === 'CycloneDX') {
    const walk = (c) => {
      if (!c) return
      if (c.purl) out.push(c.purl)
      for (const s of c.components || []) walk(s)
    }
    walk(doc.metadata && doc.metadata.component)
    for (const c of doc.components || []) walk(c)
  } else if (doc.spdxVersion) {
    for (const p of doc.packages || [])
      for (const r of p.externalRefs || [])
        if (r.referenceType === 'purl') out.push(r.referenceLocator)
  } else {
    throw new Error('neither CycloneDX nor SPDX')
  }
  return out
}

let failed = false
for (const file of process.argv.slice(2)) {
  const result = { file, purls: [], errors: [] }
  try {
    const purls = purlsOf(JSON.parse(fs.readFileSync(file, 'utf8')))
    if (purls.length === 0) result.errors.push('no purl in the document')
    for (const s of purls) {
      let p
      try {
        p = PackageURL.fromString(s)
      } catch (e) {
        result.errors.push(`${s}: ${e.message}`)
        continue
      }
      const q = p.qualifiers || {}
      if (['deb', 'rpm', 'apk'].includes(p.type)) {
        if (!q.distro) result.errors.push(`${s}: no distro qualifier`)
        if (!q.arch) result.errors.push(`${s}: no arch qualifier`)
      }
      result.purls.push({ purl: s, type: p.type, namespace: p.namespace || '', name: p.name,
        version: p.version || '', qualifiers: q })
    }
  } catch (e) {
    result.errors.push(e.message)
  }
  if (result.errors.length) failed = true
  process.stdout.write(JSON.stringify(result) + '\n')
}
process.exit(failed ? 1 : 0)
