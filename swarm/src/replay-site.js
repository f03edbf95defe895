/**
 * The replay origin: the site a crowd browses when it replays a slice of an
 * access log through the real system. Each page view of the log is a page
 * (`/_view/<n>`, replay-page.js) embedding the static assets its client
 * fetched, whose bytes are made to the log's sizes and types
 * (asset-bytes.js); the log's other URLs are opaque bytes; the client's
 * bundles and the manifest of every asset are served as a Maygh site serves
 * them. It counts every byte it sends (replay-stats.js): the measure of what
 * Maygh saves. Plain node:http on 127.0.0.1, a port of its own.
 *
 * Errors are the demo site's (protocol/errors.js, `MGH_DEMO_*`, a JSON body
 * `{error: {code, message}}`): MGH_DEMO_NOT_FOUND (404), MGH_DEMO_BAD_PATH
 * (400, a request target that is not a path), MGH_DEMO_METHOD_NOT_ALLOWED
 * (405, not GET or HEAD), MGH_DEMO_CLIENT_NOT_BUILT (503, no bundle in
 * clientDir).
 */
import { EventEmitter } from 'node:events'
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUNDLES } from '../../client/bundles.js'
import { sriHash } from '../../client/manifest.js'
import { DEMO_ERRORS, MANIFEST_VERSION, MayghError } from '../../protocol/index.js'
import { embedKind, formatOf, typeOf } from './asset-kinds.js'
import { assetBytes } from './asset-bytes.js'
import { etagMatches, requestedRange } from './http-body.js'
import { DistantLink } from '../../common/distant-link.js'
import { renderView } from './replay-page.js'
import { createReplayStats } from './replay-stats.js'

/** Defaults of {@link startReplaySite}'s options. */
export const REPLAY_DEFAULTS = Object.freeze({
  /** the folder `npm run build` writes the client bundles to, as the demo site uses */
  clientDir: fileURLToPath(new URL('../../dist/', import.meta.url)),
  /** @type {Record<string, string>} more `data-` attributes of the client's script tag: none, the client's defaults */
  clientData: {},
  /** generated bodies kept in memory (least recently used go first); the rest are made again when asked for */
  cacheBytes: 256 * 1024 * 1024,
  /**
   * a distant origin's link, emulated here rather than by a proxy in front (bench/slow-origin.js
   * reads each body whole before pacing it out, so a client's cancel never reaches the origin):
   * `rttMs` before each response's head (twice on a connection's first, for the handshake),
   * bodies sent no faster than `mbps` each. null: as fast as the socket takes.
   * @type {{ rttMs: number, mbps: number } | null}
   */
  link: null
})

const MANIFEST_PATH = '/maygh-manifest.json'
const CLIENT_SRC = '/maygh.js'
const CLIENT_FILES = new Set(Object.keys(BUNDLES).map((f) => '/' + f))
const BASE = 'http://replay.invalid'
const JSON_TYPE = 'application/json; charset=utf-8'
const HTML_TYPE = 'text/html; charset=utf-8'

/**
 * @typedef {import('./replay-stats.js').ReplayStats} ReplayStats
 * @typedef {import('../../client/manifest.js').Manifest} Manifest
 * @typedef {object} Entry one URL the site serves bytes for
 * @property {string} key the path the caller gave (the stats' name for it)
 * @property {'asset' | 'media' | 'other'} kind
 * @property {string} type
 * @property {import('./asset-kinds.js').ByteFormat} format
 * @property {number} bytes the logged size
 * @property {string | undefined} etag quoted SRI hash of the bytes served, once known
 * @typedef {object} ResponseEvent
 * @property {string | undefined} method
 * @property {string | undefined} path the request target
 * @property {import('./replay-stats.js').Kind} kind
 * @property {number} status
 * @property {number} bytes body bytes sent (as counted)
 * @property {boolean} complete false when the client went away before the whole body was sent
 * @typedef {object} View
 * @property {number} bytes
 * @property {{ href: string, kind: import('./asset-kinds.js').EmbedKind }[]} assets
 */

/**
 * A URL path (with its query, if any) in the one form the site, its pages
 * and the manifest use: what `new URL` makes of it, so a request's target
 * and the caller's path meet (`/a b.gif` and `/a%20b.gif` are one URL).
 * @param {string} path starting with `/`
 * @returns {string}
 */
export function canonicalPath (path) {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`not a URL path: ${path}`)
  const u = new URL(BASE + path)
  return u.pathname + u.search
}

/**
 * Start the replay origin on 127.0.0.1, port 0. Every asset's bytes are made
 * (and hashed for the manifest) before it listens.
 *
 * @param {object} o
 * @param {Map<string, { bytes: number, type: string }>} o.assets the log's static assets by URL path, with the logged size and content type ('' derives it from the extension)
 * @param {Map<string, { bytes: number, assets: string[] }>} o.views page views by path: the logged size of the page's HTML (0: none) and the paths it embeds, in order (each in `assets` or `others`)
 * @param {Map<string, number>} [o.others] other URLs of the log (downloads, CGI output): path → bytes, served as opaque bytes
 * @param {string} o.coordinator the client's `data-coordinator` (WebSocket URL or URLs)
 * @param {string} [o.clientDir] folder of the built client bundles
 * @param {Record<string, string>} [o.clientData] more `data-` attributes of the script tag (name without `data-` → value)
 * @param {number} [o.cacheBytes] memory for generated bodies
 * @param {{ rttMs: number, mbps: number } | null} [o.link] emulate a distant origin's link ({@link REPLAY_DEFAULTS})
 * @returns {Promise<{ url: string, port: number, manifest: Manifest, stats: () => ReplayStats, resetStats: () => void, events: EventEmitter, close: () => Promise<void> }>}
 *   `events` emits `response` ({@link ResponseEvent}) as each response ends, whole or cut short
 */
export async function startReplaySite (o) {
  const config = resolveOptions(o)
  const { entries, views } = index(config)
  const body = bodyCache(config.cacheBytes)
  /** @type {Manifest} */
  const manifest = { version: MANIFEST_VERSION, assets: {} }
  for (const [path, entry] of entries) {
    if (entry.kind === 'other') continue
    const bytes = body.of(entry)
    entry.etag = `"${sriHash(bytes)}"`
    manifest.assets[path] = { hash: entry.etag.slice(1, -1), size: bytes.length, type: entry.type }
  }
  const manifestBody = Buffer.from(JSON.stringify(manifest))
  const manifestEtag = `"${sriHash(manifestBody)}"`
  const stats = createReplayStats()
  const events = new EventEmitter()
  /** the link to the visitors: a distant one (config.link), or loopback as it is */
  const link = new DistantLink(config.link ?? { rttMs: 0, mbps: Infinity })

  /**
   * Send a whole response (or its head alone for HEAD, 304, 416) and count it.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {{ status: number, headers: Record<string, string | number>, body?: Buffer, kind: import('./replay-stats.js').Kind, asset?: string }} r
   */
  async function send (req, res, { status, headers, body = Buffer.alloc(0), kind, asset }) {
    const count = stats.start(kind, asset, status === 304)
    const bodyless = req.method === 'HEAD' || status === 304
    if (config.link) {
      await link.arrive(req)
      if (res.destroyed) {
        stats.aborted()
        events.emit('response', { method: req.method, path: req.url, kind, status, bytes: 0, complete: false })
        return
      }
    }
    res.writeHead(status, status === 304 ? headers : { 'Content-Length': body.length, ...headers })
    let sent = 0
    let complete = true
    if (bodyless) {
      res.end()
    } else {
      complete = await link.send(res, body, (n) => {
        sent += n
        count(n)
      })
      if (!complete) stats.aborted()
    }
    events.emit('response', { method: req.method, path: req.url, kind, status, bytes: sent, complete })
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {keyof typeof DEMO_ERRORS} code
   * @param {Record<string, string>} [extra] headers
   */
  function fail (req, res, code, extra = {}) {
    const { message, status = 500 } = new MayghError(DEMO_ERRORS[code])
    const body = Buffer.from(JSON.stringify({ error: { code, message } }))
    return send(req, res, { status, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store', ...extra }, body, kind: 'error' })
  }

  /**
   * A resource with an ETag: 304 when the client has it, else all of it or the range asked for.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {{ body: Buffer, type: string, etag: string, kind: import('./replay-stats.js').Kind, asset?: string, ranges: boolean }} r
   */
  function sendTagged (req, res, { body, type, etag, kind, asset, ranges }) {
    const headers = { ETag: etag, 'Cache-Control': 'no-cache' }
    if (etagMatches(req.headers['if-none-match'], etag)) return send(req, res, { status: 304, headers, kind, asset })
    /** @type {Record<string, string | number>} */
    const full = { ...headers, 'Content-Type': type }
    if (!ranges) return send(req, res, { status: 200, headers: full, body, kind, asset })
    full['Accept-Ranges'] = 'bytes'
    const range = requestedRange(req.headers, body.length, etag)
    if (range === 'whole') return send(req, res, { status: 200, headers: full, body, kind, asset })
    if (range === 'unsatisfiable') return send(req, res, { status: 416, headers: { ...full, 'Content-Range': `bytes */${body.length}` }, kind, asset })
    full['Content-Range'] = `bytes ${range.start}-${range.end - 1}/${body.length}`
    return send(req, res, { status: 206, headers: full, body: body.subarray(range.start, range.end), kind, asset })
  }

  /**
   * Route one request.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  async function handle (req, res) {
    const target = req.url ?? ''
    let url
    try {
      if (target.startsWith('/')) url = new URL(BASE + target)
    } catch {}
    if (!url) return fail(req, res, 'MGH_DEMO_BAD_PATH')
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(req, res, 'MGH_DEMO_METHOD_NOT_ALLOWED', { Allow: 'GET, HEAD' })
    const view = views.get(url.pathname)
    if (view) {
      const token = url.searchParams.get('token')
      const client = url.searchParams.get('maygh') === '0'
        ? null
        : { src: CLIENT_SRC, data: { coordinator: config.coordinator, ...config.clientData, ...(token === null ? {} : { token }) } }
      const html = renderView({ path: url.pathname, bytes: view.bytes, assets: view.assets, client })
      return send(req, res, { status: 200, headers: { 'Content-Type': HTML_TYPE, 'Cache-Control': 'no-store' }, body: html, kind: 'view' })
    }
    const entry = entries.get(url.pathname + url.search) ?? entries.get(url.pathname)
    if (entry) {
      const bytes = body.of(entry)
      entry.etag ??= `"${sriHash(bytes)}"`
      const asset = entry.kind === 'other' ? undefined : entry.key
      return sendTagged(req, res, { body: bytes, type: entry.type, etag: entry.etag, kind: entry.kind, asset, ranges: true })
    }
    if (url.pathname === MANIFEST_PATH) {
      return sendTagged(req, res, { body: manifestBody, type: JSON_TYPE, etag: manifestEtag, kind: 'maygh', ranges: false })
    }
    if (CLIENT_FILES.has(url.pathname)) {
      // Read on every request, as the demo site does, so a rebuilt client is picked up without a restart.
      const code = await readFile(join(config.clientDir, url.pathname)).catch(() => undefined)
      if (code === undefined) return fail(req, res, 'MGH_DEMO_CLIENT_NOT_BUILT', { 'Retry-After': '5' })
      return sendTagged(req, res, { body: code, type: 'text/javascript; charset=utf-8', etag: `"${sriHash(code)}"`, kind: 'maygh', ranges: false })
    }
    return fail(req, res, 'MGH_DEMO_NOT_FOUND')
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve(undefined)
    })
  })
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  /** @type {Promise<void> | undefined} */
  let closing
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    manifest,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    events,
    close () {
      closing ??= new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    }
  }
}

/**
 * Merge options over {@link REPLAY_DEFAULTS}, check them, freeze.
 * @param {Parameters<typeof startReplaySite>[0]} o
 */
function resolveOptions (o) {
  const config = {
    assets: o.assets,
    views: o.views,
    others: o.others ?? new Map(),
    coordinator: o.coordinator,
    clientDir: o.clientDir ?? REPLAY_DEFAULTS.clientDir,
    clientData: o.clientData ?? REPLAY_DEFAULTS.clientData,
    cacheBytes: o.cacheBytes ?? REPLAY_DEFAULTS.cacheBytes,
    link: o.link ?? REPLAY_DEFAULTS.link
  }
  if (!(config.assets instanceof Map) || !(config.views instanceof Map) || !(config.others instanceof Map)) throw new TypeError('assets, views and others must be Maps')
  if (typeof config.coordinator !== 'string' || config.coordinator === '') throw new TypeError('coordinator must be the WebSocket URL(s) for data-coordinator')
  for (const name of Object.keys(config.clientData)) {
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new TypeError(`clientData names a data- attribute without "data-", in lower case: ${name}`)
  }
  if (!Number.isSafeInteger(config.cacheBytes) || config.cacheBytes < 0) throw new TypeError('cacheBytes must be a non-negative integer')
  if (config.link && !(config.link.rttMs >= 0 && config.link.mbps > 0)) throw new TypeError('link needs rttMs ≥ 0 and mbps > 0')
  return Object.freeze(config)
}

/**
 * The site's URLs by canonical path: assets (a media asset counts as
 * `media`), others, and the views with each embedded asset's href and kind.
 * A path given twice (in two spellings of one URL) keeps its first entry.
 * @param {ReturnType<typeof resolveOptions>} config
 * @returns {{ entries: Map<string, Entry>, views: Map<string, View> }}
 */
function index (config) {
  /** @type {Map<string, Entry>} */
  const entries = new Map()
  /** @type {Map<string, import('./asset-kinds.js').EmbedKind>} */
  const kinds = new Map()
  for (const [key, { bytes, type }] of config.assets) {
    const path = canonicalPath(key)
    if (entries.has(path)) continue
    const served = typeOf(path, type)
    const embed = embedKind(path, served)
    kinds.set(path, embed)
    entries.set(path, { key, kind: embed === 'media' ? 'media' : 'asset', type: served, format: formatOf(served), bytes, etag: undefined })
  }
  for (const [key, bytes] of config.others) {
    const path = canonicalPath(key)
    if (entries.has(path)) continue
    kinds.set(path, 'fetch')
    entries.set(path, { key, kind: 'other', type: typeOf(path, ''), format: 'random', bytes, etag: undefined })
  }
  /** @type {Map<string, View>} */
  const views = new Map()
  for (const [key, view] of config.views) {
    const path = new URL(BASE + canonicalPath(key)).pathname
    if (!Number.isSafeInteger(view.bytes) || view.bytes < 0) throw new TypeError(`view ${key}: bytes must be a non-negative integer`)
    const assets = view.assets.map((a) => {
      const href = canonicalPath(a)
      const kind = kinds.get(href)
      if (kind === undefined) throw new TypeError(`view ${key} embeds ${a}, which is neither in assets nor in others`)
      return { href, kind }
    })
    views.set(path, { bytes: view.bytes, assets })
  }
  return { entries, views }
}

/**
 * Generated bodies, the least recently used dropped past `budget` bytes
 * (made again, identically, when asked for next).
 * @param {number} budget
 */
function bodyCache (budget) {
  /** @type {Map<Entry, Buffer>} */
  const kept = new Map()
  let size = 0
  return {
    /**
     * @param {Entry} entry
     * @returns {Buffer}
     */
    of (entry) {
      let bytes = kept.get(entry)
      if (bytes) {
        kept.delete(entry) // re-inserted below: most recently used last
      } else {
        bytes = assetBytes(entry.key, entry.bytes, entry.format)
        size += bytes.length
      }
      kept.set(entry, bytes)
      for (const [old, b] of kept) {
        if (size <= budget) break
        kept.delete(old)
        size -= b.length
      }
      return bytes
    }
  }
}
