/**
 * The demo origin: an Etsy-like shop page that embeds the Maygh client, its
 * static assets, the asset manifest, and a byte counter for everything it
 * serves (`/origin-stats`, with its last minutes second by second at
 * `/origin-stats/history`) with a live dashboard. Plain node:http.
 *
 * Counted: every response on the site's own paths (page, client, manifest,
 * assets, errors). Not counted: `/origin-stats*` and `/dashboard*`, which are
 * the instrument rather than the site.
 */
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { isIPv6 } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildManifest, sriHash } from '../../client/manifest.js'
import { DEMO_ERRORS, MayghError } from '../../protocol/index.js'
import { buildCatalog } from './catalog.js'
import { renderDashboard } from './dashboard-page.js'
import { DEFAULT_PUBLIC_DIR, ensureGenerated } from './images.js'
import { UNKNOWN_PATH, createOriginStats } from './origin-stats.js'
import { renderAboutPage, renderShopPage } from './shop-page.js'
import { BUNDLES } from '../../client/bundles.js'
import { DistantLink } from '../../common/distant-link.js'
import { loadChartJs } from '../../common/chart-js.js'

/** Defaults for {@link startDemoSite}; `coordinatorHttpUrl` undefined means "derive from coordinatorUrl". */
const defaults = {
  port: 8080,
  host: '127.0.0.1',
  coordinatorUrl: 'ws://127.0.0.1:7070',
  /** @type {string | undefined} */
  coordinatorHttpUrl: undefined,
  /**
   * more `data-` attributes for the client's script tag (name without `data-` → value); none:
   * the client's defaults, as a site that adds the script tag as the README says has them
   * @type {Record<string, string>}
   */
  clientData: {},
  /**
   * the link between this origin and its visitors (common/distant-link.js's `DistantLink`: a round
   * trip before each response, two on a new connection, the body at most `mbps`), applied to the
   * site's own responses, not the instrument's; null: loopback as it is. What is counted is what
   * left before a visitor went away (a download the client cancels counts as far as it went)
   * @type {{ rttMs: number, mbps: number } | null}
   */
  link: null,
  /**
   * how many seconds `/origin-stats/history` (the dashboard's charts) keeps, one sample a
   * second, 32 bytes each (600: 19 KB), whatever the traffic; 60 to 3600
   */
  historySeconds: 600,
  /** the folder `npm run build` writes the client bundles to (maygh.js, maygh-sw.js, maygh-elements.js) */
  clientDir: fileURLToPath(new URL('../../dist/', import.meta.url)),
  publicDir: DEFAULT_PUBLIC_DIR
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const DEMO_DEFAULTS = Object.freeze(defaults)

/** the client bundles, served from `clientDir` */
const CLIENT_FILES = new Set(Object.keys(BUNDLES).map((f) => '/' + f))

/**
 * The page scripts are used from the HTTP cache for a minute and then while
 * revalidated in the background (README, "Deploying": a page script
 * revalidated on every page view costs its peers a round trip to the origin
 * before they can start). The worker's script is not: the browser checks it
 * itself. Everything else is revalidated on every use.
 * @param {string} path
 */
const cacheControlOf = (path) => PAGE_SCRIPTS.has(path) ? 'max-age=60, stale-while-revalidate=86400' : 'no-cache'
const PAGE_SCRIPTS = new Set(['/maygh.js', '/maygh-elements.js'])
const NOT_COUNTED = new Set(['/origin-stats', '/origin-stats/history', '/origin-stats/reset', '/dashboard', '/dashboard/chart.js'])
/** the instrument's read-only JSON, readable from any page (CORS) and never cached */
const STATS_PATHS = new Set(['/origin-stats', '/origin-stats/history'])
const CORS = { 'Access-Control-Allow-Origin': '*' }
const JSON_TYPE = 'application/json; charset=utf-8'
const HTML_TYPE = 'text/html; charset=utf-8'

/**
 * @typedef {{ body: Buffer, type: string, etag?: string }} Resource
 * @typedef {import('./origin-stats.js').OriginStatsSnapshot} OriginStatsSnapshot
 * @typedef {import('./origin-stats.js').OriginHistory} OriginHistory
 */

/** @type {Promise<string> | undefined} Chart.js for the dashboard, read once for every site of the process */
let chartJs

/**
 * Start the demo site (generating its assets first if needed).
 *
 * @param {Partial<typeof DEMO_DEFAULTS>} [options]
 * @returns {Promise<{ url: string, port: number, stats: () => OriginStatsSnapshot, history: () => OriginHistory, resetStats: () => void, close: () => Promise<void> }>}
 */
export async function startDemoSite (options = {}) {
  const config = resolveOptions(options)
  await ensureGenerated(config.publicDir)
  const manifest = await buildManifest(config.publicDir)
  /** @type {Map<string, Resource>} the site's fixed resources, loaded once */
  const resources = new Map()
  for (const [path, entry] of Object.entries(manifest.assets)) {
    resources.set(path, { body: await readFile(join(config.publicDir, path)), type: entry.type, etag: `"${entry.hash}"` })
  }
  const catalog = buildCatalog()
  const page = { catalog, coordinatorUrl: config.coordinatorUrl, clientData: config.clientData, link: config.link }
  resources.set('/', { body: Buffer.from(renderShopPage({ ...page, markup: 'plain' })), type: HTML_TYPE })
  resources.set('/elements', { body: Buffer.from(renderShopPage({ ...page, markup: 'elements' })), type: HTML_TYPE })
  resources.set('/about', { body: Buffer.from(renderAboutPage(page)), type: HTML_TYPE })
  resources.set('/maygh-manifest.json', withEtag(Buffer.from(JSON.stringify(manifest)), JSON_TYPE))
  const dashboard = Buffer.from(renderDashboard({ coordinatorHttpUrl: config.coordinatorHttpUrl, historySeconds: config.historySeconds }))
  const stats = createOriginStats({ historySeconds: config.historySeconds })
  const link = config.link && new DistantLink(config.link)

  /**
   * Send one response and count it unless it belongs to the instrument.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {{ status: number, body: Buffer, headers: Record<string, string | number>, countAs?: string }} r
   */
  async function send (req, res, { status, body, headers, countAs }) {
    const bodyless = req.method === 'HEAD' || status === 304 || status === 204
    const distant = link !== null && countAs !== undefined
    if (distant) await link.arrive(req)
    res.writeHead(status, status === 304 || status === 204 ? headers : { 'Content-Length': body.length, ...headers })
    let sent = 0
    if (distant && !bodyless) await link.send(res, body, (n) => { sent += n })
    else {
      res.end(bodyless ? undefined : body)
      sent = bodyless ? 0 : body.length
    }
    if (countAs !== undefined) stats.record(countAs, sent, Object.hasOwn(manifest.assets, countAs))
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {keyof typeof DEMO_ERRORS} code
   * @param {string | undefined} countAs
   * @param {Record<string, string>} [extra] headers
   */
  function fail (req, res, code, countAs, extra = {}) {
    const { message, status = 500 } = new MayghError(DEMO_ERRORS[code])
    const body = JSON.stringify({ error: { code, message } })
    return send(req, res, { status, body: Buffer.from(body), headers: { 'Content-Type': JSON_TYPE, ...extra }, countAs })
  }

  /**
   * Route one request.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  async function handle (req, res) {
    const path = parsePath(req.url ?? '/')
    if (path === undefined) return fail(req, res, 'MGH_DEMO_BAD_PATH', UNKNOWN_PATH)
    const countAs = NOT_COUNTED.has(path) ? undefined : path
    const method = req.method ?? 'GET'
    if (path === '/origin-stats/reset') {
      if (method === 'OPTIONS') return send(req, res, { status: 204, body: Buffer.alloc(0), headers: { ...CORS, 'Access-Control-Allow-Methods': 'POST' } })
      if (method !== 'POST') return fail(req, res, 'MGH_DEMO_METHOD_NOT_ALLOWED', countAs, { Allow: 'POST', ...CORS })
      stats.reset()
      return send(req, res, { status: 204, body: Buffer.alloc(0), headers: CORS })
    }
    const bundle = CLIENT_FILES.has(path)
    const known = NOT_COUNTED.has(path) || bundle || resources.has(path)
    if (!known) return fail(req, res, 'MGH_DEMO_NOT_FOUND', UNKNOWN_PATH)
    if (method !== 'GET' && method !== 'HEAD') return fail(req, res, 'MGH_DEMO_METHOD_NOT_ALLOWED', countAs, { Allow: 'GET, HEAD' })
    /** @type {Resource | undefined} */
    let resource
    if (path === '/origin-stats') {
      resource = { body: Buffer.from(JSON.stringify(stats.snapshot())), type: JSON_TYPE }
    } else if (path === '/origin-stats/history') {
      resource = { body: Buffer.from(JSON.stringify(stats.history())), type: JSON_TYPE }
    } else if (path === '/dashboard') {
      resource = { body: dashboard, type: HTML_TYPE }
    } else if (path === '/dashboard/chart.js') {
      chartJs ??= loadChartJs()
      const code = await chartJs.catch(() => undefined)
      if (code === undefined) return fail(req, res, 'MGH_DEMO_NOT_FOUND', countAs)
      resource = { body: Buffer.from(code), type: 'text/javascript; charset=utf-8' }
    } else if (bundle) {
      // Read on every request so a rebuilt client is picked up without a restart.
      const code = await readFile(join(config.clientDir, path)).catch(() => undefined)
      if (code === undefined) return fail(req, res, 'MGH_DEMO_CLIENT_NOT_BUILT', countAs, { 'Retry-After': '5' })
      resource = withEtag(code, 'text/javascript; charset=utf-8')
    } else {
      resource = /** @type {Resource} */ (resources.get(path))
    }
    /** @type {Record<string, string>} */
    const headers = { 'Content-Type': resource.type, 'Cache-Control': cacheControlOf(path) }
    if (STATS_PATHS.has(path)) Object.assign(headers, CORS, { 'Cache-Control': 'no-store' })
    // The package's file changes only with an npm install, which restarts the demo.
    if (path === '/dashboard/chart.js') headers['Cache-Control'] = 'max-age=86400'
    if (resource.etag !== undefined) {
      headers.ETag = resource.etag
      if (etagMatches(req.headers['if-none-match'], resource.etag)) {
        return send(req, res, { status: 304, body: Buffer.alloc(0), headers: { ETag: resource.etag, 'Cache-Control': cacheControlOf(path) }, countAs })
      }
    }
    return send(req, res, { status: 200, body: resource.body, headers, countAs })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => {
      server.off('error', reject)
      resolve(undefined)
    })
  })
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  let closing
  return {
    url: `http://${isIPv6(config.host) ? `[${config.host}]` : config.host}:${port}`,
    port,
    stats: () => stats.snapshot(),
    history: () => stats.history(),
    resetStats: () => stats.reset(),
    close () {
      closing ??= new Promise((resolve) => {
        server.close(() => resolve(undefined))
        server.closeAllConnections()
      })
      return closing
    }
  }
}

/**
 * Decoded URL path, or undefined when it is malformed or tries to leave the site
 * (bad %-escape, a "." or ".." segment, a backslash or NUL, not starting with "/").
 *
 * @param {string} url request target as received (Node does not normalize it)
 * @returns {string | undefined}
 */
export function parsePath (url) {
  const raw = url.split(/[?#]/, 1)[0]
  if (!raw.startsWith('/')) return undefined
  let path
  try {
    path = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  if (/[\\\0]/.test(path) || path.split('/').some((s) => s === '.' || s === '..')) return undefined
  return path
}

/**
 * A resource whose ETag is the SRI hash of its body (the same name the manifest uses).
 * @param {Buffer} body
 * @param {string} type
 * @returns {Resource}
 */
function withEtag (body, type) {
  return { body, type, etag: `"${sriHash(body)}"` }
}

/**
 * Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 §13.1.2).
 * @param {string | undefined} header
 * @param {string} etag
 * @returns {boolean}
 */
function etagMatches (header, etag) {
  if (header === undefined) return false
  return header.split(',').some((t) => t.trim() === '*' || t.trim().replace(/^W\//, '') === etag)
}

/**
 * Merge options over {@link DEMO_DEFAULTS}, validate, derive the coordinator's HTTP URL, freeze.
 * @param {Partial<typeof DEMO_DEFAULTS>} options
 */
function resolveOptions (options) {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
  const config = { ...DEMO_DEFAULTS, ...defined }
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) throw new TypeError('port must be an integer from 0 to 65535')
  let ws
  try {
    ws = new URL(config.coordinatorUrl)
  } catch {
    throw new TypeError(`coordinatorUrl is not a URL: ${config.coordinatorUrl}`)
  }
  if (ws.protocol !== 'ws:' && ws.protocol !== 'wss:') throw new TypeError('coordinatorUrl must be a ws: or wss: URL')
  const { link } = config
  if (link !== null && !(link.rttMs >= 0 && link.rttMs <= 10_000 && link.mbps > 0)) throw new TypeError('link must be null or { rttMs: 0 to 10000, mbps: above 0 }')
  const { historySeconds } = config
  if (!Number.isInteger(historySeconds) || historySeconds < 60 || historySeconds > 3600) throw new TypeError('historySeconds must be an integer from 60 to 3600')
  // The coordinator serves /stats on the same host and port as its WebSocket endpoint.
  const coordinatorHttpUrl = config.coordinatorHttpUrl ?? `${ws.protocol === 'wss:' ? 'https:' : 'http:'}//${ws.host}`
  return Object.freeze({ ...config, coordinatorHttpUrl: coordinatorHttpUrl.replace(/\/+$/, '') })
}
