/**
 * Builds the asset manifest a page uses to name its static assets by content
 * (URL path → SRI SHA-256, size, type). Node-side; used by the `maygh-manifest`
 * CLI and by the demo site. Format: docs/protocol.md, "Manifest".
 */
import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { basename, join, posix, relative, resolve, sep, extname } from 'node:path'
import { MANIFEST_VERSION, PIECE_BYTES, PIECED_ABOVE, PIECE_LISTS_DIR, pieceListPath } from '../protocol/index.js'
import { BUNDLES } from './bundles.js'

/**
 * Files never listed, wherever they are: the manifest itself (so
 * `maygh-manifest DIR > DIR/maygh-manifest.json` does not list its own output)
 * and the client's bundles (the worker must not answer for the script that
 * makes the page able to answer it).
 */
export const NEVER_LISTED = Object.freeze(['maygh-manifest.json', ...Object.keys(BUNDLES)])

/** Content types by extension for the assets a site typically offloads. */
export const CONTENT_TYPES = Object.freeze({
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.svg': 'image/svg+xml',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.json': 'application/json',
  '.html': 'text/html; charset=utf-8',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm'
})

/**
 * @param {string} path
 * @returns {string}
 */
export function contentType (path) {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream'
}

/**
 * SRI name of some bytes: `sha256-<base64>`.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function sriHash (bytes) {
  return 'sha256-' + createHash('sha256').update(bytes).digest('base64')
}

/**
 * An asset's piece list (protocol/pieces.js: the SHA-256 digests of its
 * PIECE_BYTES pieces, one after the other), hashed synchronously.
 * @param {Uint8Array} bytes
 * @returns {Buffer}
 */
export function pieceListOf (bytes) {
  const digests = []
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) digests.push(createHash('sha256').update(bytes.subarray(at, at + PIECE_BYTES)).digest())
  return Buffer.concat(digests)
}

/**
 * The name of an asset's piece list: the manifest's `pieces`.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export const piecesRoot = (bytes) => sriHash(pieceListOf(bytes))

/**
 * @typedef {{ hash: string, size: number, type: string, pieces?: string }} ManifestEntry
 *   `pieces`: above PIECED_ABOVE bytes, the name of its piece list
 * @typedef {{ version: number, assets: Record<string, ManifestEntry> }} Manifest
 */

/**
 * Manifest for every file under `dir` whose extension is in `extensions`,
 * but for {@link NEVER_LISTED} and `exclude`.
 *
 * @param {string} dir folder served at `prefix`
 * @param {{ prefix?: string, extensions?: string[], exclude?: string[], lists?: Map<string, Buffer> }} [options]
 *   `exclude`: more files not to list (paths); `lists`: filled with the piece list of each asset named in
 *   pieces, by its name (what `writePieceLists` writes)
 * @returns {Promise<Manifest>}
 */
export async function buildManifest (dir, options = {}) {
  const prefix = options.prefix ?? '/'
  if (!prefix.startsWith('/')) throw new TypeError('prefix must start with "/"')
  const extensions = new Set(options.extensions ?? Object.keys(CONTENT_TYPES).filter((e) => e !== '.html'))
  const excluded = new Set((options.exclude ?? []).map((f) => resolve(f)))
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile() && extensions.has(extname(d.name).toLowerCase()) && !NEVER_LISTED.includes(d.name) && basename(d.parentPath ?? d.path) !== PIECE_LISTS_DIR)
    .map((d) => join(d.parentPath ?? d.path, d.name))
    .filter((f) => !excluded.has(resolve(f)))
    .sort()
  /** @type {Record<string, ManifestEntry>} */
  const assets = {}
  for (const file of files) {
    const bytes = await readFile(file)
    const urlPath = posix.join(prefix, relative(dir, file).split(sep).join('/'))
    /** @type {ManifestEntry} */
    const entry = assets[urlPath] = { hash: sriHash(bytes), size: bytes.length, type: contentType(file) }
    if (bytes.length > PIECED_ABOVE) {
      const list = pieceListOf(bytes)
      entry.pieces = sriHash(list)
      options.lists?.set(entry.pieces, list)
    }
  }
  return { version: MANIFEST_VERSION, assets }
}

/**
 * Write piece lists into `<folder>/maygh-pieces/`, where a client finds them
 * beside a manifest served from `<folder>`. Lists no manifest names any more
 * stay (a visitor may still hold an older manifest); they are small.
 * @param {string} folder where the manifest is served from
 * @param {Map<string, Buffer>} lists by name
 * @returns {Promise<number>} lists written
 */
export async function writePieceLists (folder, lists) {
  if (!lists.size) return 0
  await mkdir(join(folder, PIECE_LISTS_DIR), { recursive: true })
  for (const [name, list] of lists) await writeFile(join(folder, pieceListPath(name)), list)
  return lists.size
}
