#!/usr/bin/env node
/**
 * maygh-manifest DIR [--prefix /] [--out FILE]
 * Writes the manifest (URL path → SHA-256, size, type) for the static assets
 * under DIR. Never listed: the manifest itself, the --out file and the client's
 * own bundles (client/manifest.js, NEVER_LISTED).
 */
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { buildManifest } from '../manifest.js'

const usage = 'usage: maygh-manifest DIR [--prefix /] [--out FILE]'
let args
try {
  args = parseArgs({
    allowPositionals: true,
    options: { prefix: { type: 'string', default: '/' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
  })
} catch (err) {
  console.error(`maygh-manifest: ${err.message}\n${usage}`)
  process.exit(2)
}
if (args.values.help) {
  console.log(usage)
  process.exit(0)
}
if (args.positionals.length !== 1) {
  console.error(usage)
  process.exit(2)
}
try {
  const manifest = await buildManifest(args.positionals[0], { prefix: args.values.prefix, exclude: args.values.out ? [args.values.out] : [] })
  const text = JSON.stringify(manifest, null, 2) + '\n'
  if (args.values.out) await writeFile(args.values.out, text)
  else process.stdout.write(text)
  console.error(`maygh-manifest: ${Object.keys(manifest.assets).length} assets`)
} catch (err) {
  console.error(`maygh-manifest: ${err.code ?? 'ERROR'}: ${err.message}`)
  process.exit(1)
}
