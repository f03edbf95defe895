#!/usr/bin/env node
/**
 * maygh-manifest DIR [--prefix /] [--out FILE]
 * Writes the manifest (URL path → SHA-256, size, type) for the static assets
 * under DIR, and the piece lists of those above 4 MiB into maygh-pieces/
 * beside the manifest (the --out file's folder, else DIR). Never listed: the
 * manifest itself, the --out file, the piece lists and the client's own
 * bundles (client/manifest.js, NEVER_LISTED).
 */
import { writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { buildManifest, writePieceLists } from '../manifest.js'
import { PIECE_LISTS_DIR } from '../../protocol/index.js'

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
  /** @type {Map<string, Buffer>} */
  const lists = new Map()
  const manifest = await buildManifest(args.positionals[0], { prefix: args.values.prefix, exclude: args.values.out ? [args.values.out] : [], lists })
  const text = JSON.stringify(manifest, null, 2) + '\n'
  if (args.values.out) await writeFile(args.values.out, text)
  else process.stdout.write(text)
  // Beside the manifest: served from the --out file's folder, or from DIR when it goes to stdout.
  const beside = args.values.out ? dirname(args.values.out) : args.positionals[0]
  const written = await writePieceLists(beside, lists)
  console.error(`maygh-manifest: ${Object.keys(manifest.assets).length} assets${written ? `, ${written} in pieces (their lists in ${beside}/${PIECE_LISTS_DIR}/)` : ''}`)
} catch (err) {
  console.error(`maygh-manifest: ${err.code ?? 'ERROR'}: ${err.message}`)
  process.exit(1)
}
