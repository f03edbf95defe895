/**
 * The coordinator's HTTP endpoints, on the port its WebSocket listens on: a
 * table of routes by path, each a small function that takes the request and
 * the slice of the coordinator it reads ({@link RouteContext}) and answers
 * (or throws a coded MayghError); {@link serveHttp} looks the path up and does
 * what is common to every route. Every route only reads, so every one answers
 * GET and HEAD (HEAD: the same answer without its body, as Node sends it) and
 * nothing else: MGH_ERR_HTTP_METHOD (405, with `Allow`) for any other method
 * on any path, MGH_ERR_HTTP_NOT_FOUND (404) for a path not in the table.
 * JSON answers and errors are open to every origin (CORS) and never cached.
 */
import { ERRORS, LIMITS, MayghError } from '../../protocol/index.js'
import { isAssetName } from './fields.js'
import { USAGE_MINUTE_MS, noUsage } from './store/store.js'
import { peerShare, siteTotals } from './usage.js'
import { renderDashboard } from './dashboard-page.js'
import { loadChartJs } from '../../common/chart-js.js'
import { heldAmong } from './handlers/held.js'

/**
 * @typedef {object} RouteContext what the routes read of their coordinator (one, made as it starts)
 * @property {string} shard this coordinator's shard id
 * @property {import('./store/store.js').Store} store
 * @property {Readonly<import('./config.js').Config>} config
 * @property {import('./metrics.js').Metrics} metrics
 * @property {import('./networks.js').Networks} networks names visitors' networks (pairWithinNetwork)
 * @property {Record<string, number>} counters this shard's counters (`/stats`; `/held` counts lookups that missed)
 * @property {() => ReturnType<import('./server.js').Coordinator['stats']>} stats peers and holdings over every live shard, and this one's counters
 * @property {() => { ready: boolean, storeUp: boolean, draining: boolean }} readiness whether it should get new clients, and why not
 * @property {(err: Error, context: string) => void} warn
 *
 * @typedef {object} Answer what a route answers
 * @property {number} status
 * @property {object} [json] a JSON body (sent with CORS open and `no-store`)
 * @property {Record<string, string>} [headers] with `body`: an answer of its own kind
 * @property {string} [body]
 *
 * @typedef {(req: import('node:http').IncomingMessage, context: RouteContext) => Answer | Promise<Answer>} Route
 */

/** `/usage`: how far back a dashboard may ask (31 days), and the assets it names */
const USAGE_MAX_MINUTES = 44_640
const USAGE_TOP_ASSETS = 10
const DASHBOARD = renderDashboard()
/** @type {Promise<string> | undefined} Chart.js, read once for every coordinator of the process */
let chartJs

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json', 'access-control-allow-origin': '*', 'cache-control': 'no-store' })

/**
 * @param {number} status
 * @param {object} body
 * @returns {Answer}
 */
const json = (status, body) => ({ status, json: body })

/** @param {import('node:http').IncomingMessage} req @returns {URLSearchParams} */
const queryOf = (req) => new URL(req.url ?? '/', 'http://x').searchParams

/** @type {Route} liveness: the process answers */
const getHealthz = (req, { shard }) => json(200, { ok: true, shard })

/** @type {Route} readiness: 503 while the store is unreachable or it drains (a load balancer sends new clients elsewhere) */
function getReadyz (req, { shard, readiness }) {
  const { ready, storeUp, draining } = readiness()
  return json(ready ? 200 : 503, { ready, shard, store: storeUp ? 'up' : 'down', draining })
}

/** @type {Route} peers, holdings and counters, and every site's usage totals (`usage: null` when the store fails) */
function getStats (req, { store, stats }) {
  return siteTotals(store).then(
    (totals) => json(200, { ...stats(), usage: Object.fromEntries(totals.map(([site, total]) => [site, { ...total, peerShare: peerShare(total) }])) }),
    () => json(200, { ...stats(), usage: null }))
}

/**
 * `GET /usage?site=…&minutes=…`: what the dashboard shows: one site's totals,
 * its last `minutes` (default 60), its top assets, the sites there are and the
 * peers online. No site named: the first there is.
 * @param {import('node:http').IncomingMessage} req
 * @param {RouteContext} context
 * @returns {Promise<Answer>}
 */
async function getUsage (req, { store, stats, warn }) {
  const query = queryOf(req)
  const minutes = Number(query.get('minutes') ?? 60)
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > USAGE_MAX_MINUTES) throw new MayghError(ERRORS.MGH_ERR_HTTP_BAD_QUERY, `minutes=${query.get('minutes')}`)
  try {
    const sites = (await store.usageSites()).sort()
    const site = query.get('site') ?? sites[0] ?? null
    const found = site === null ? null : await store.siteUsage(site, Date.now() - minutes * USAGE_MINUTE_MS, USAGE_TOP_ASSETS)
    const total = found?.total ?? noUsage()
    return json(200, { site, sites, peers: stats().peers, total, peerShare: peerShare(total), minutes: found?.minutes ?? [], assets: found?.assets ?? [] })
  } catch (err) {
    warn(/** @type {Error} */ (err), 'usage read failed')
    throw new MayghError(ERRORS.MGH_ERR_STORE)
  }
}

/**
 * `GET /held?hashes=a,b`: which of these assets (at most maxLookupHashes)
 * some live visitor holds, for the asker's network under pairWithinNetwork,
 * counted as the `held` message is (handlers/held.js, which says why). Pages
 * of origins allowedOrigins does not list are refused. A store that fails or
 * is slow answers MGH_ERR_STORE (the worker then waits for its page, as
 * without it).
 * @param {import('node:http').IncomingMessage} req
 * @param {RouteContext} context
 * @returns {Promise<Answer>}
 */
async function getHeld (req, context) {
  const { config, networks } = context
  const origin = req.headers.origin
  if (config.allowedOrigins !== null && !(origin && config.allowedOrigins.includes(origin))) throw new MayghError(ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED)
  const list = queryOf(req).get('hashes')?.split(',') ?? []
  if (!list.length || list.length > LIMITS.maxLookupHashes || !list.every(isAssetName)) throw new MayghError(ERRORS.MGH_ERR_HTTP_BAD_QUERY, `hashes: 1 to ${LIMITS.maxLookupHashes} SRI sha256 names, comma separated`)
  const hashes = [...new Set(list)]
  const scope = config.pairWithinNetwork ? `${await networks.name(req.socket.remoteAddress ?? '')}/` : ''
  return json(200, { held: await heldAmong(hashes, hashes.map((hash) => scope + hash), context) })
}

/** @type {Route} the savings dashboard (dashboard-page.js) */
const getDashboard = () => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }, body: DASHBOARD })

/** @type {Route} the Chart.js the dashboard loads; 404 when the package is not installed */
function getChartJs (req, { warn }) {
  chartJs ??= loadChartJs()
  return chartJs.then((code) => ({ status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'max-age=86400' }, body: code }), (err) => {
    warn(err, 'chart.js not served')
    throw new MayghError(ERRORS.MGH_ERR_HTTP_NOT_FOUND, err.message)
  })
}

/** @type {Route} Prometheus metrics (metrics.js); a bare 500 when collecting them fails */
function getMetrics (req, { metrics, warn }) {
  return metrics.text().then(({ contentType, body }) => ({ status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body }), (err) => {
    warn(err, 'metrics failed')
    return { status: 500 }
  })
}

/** @type {ReadonlyMap<string, Route>} every endpoint, by path (each answers GET and HEAD) */
export const ROUTES = new Map([
  ['/healthz', getHealthz],
  ['/readyz', getReadyz],
  ['/stats', getStats],
  ['/usage', getUsage],
  ['/held', getHeld],
  ['/dashboard', getDashboard],
  ['/dashboard/chart.js', getChartJs],
  ['/metrics', getMetrics]
])

/**
 * Answer one HTTP request: its route's answer, or the coded error it threw.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {RouteContext} context
 */
export function serveHttp (req, res, context) {
  const path = (req.url ?? '/').split('?')[0]
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    context.metrics.countError(ERRORS.MGH_ERR_HTTP_METHOD.code)
    res.setHeader('allow', 'GET, HEAD')
    return fail(res, new MayghError(ERRORS.MGH_ERR_HTTP_METHOD, `${req.method} ${path}`))
  }
  const route = ROUTES.get(path)
  if (route === undefined) return fail(res, new MayghError(ERRORS.MGH_ERR_HTTP_NOT_FOUND))
  let answer
  try {
    answer = route(req, context)
  } catch (err) {
    return fail(res, err)
  }
  if (answer instanceof Promise) answer.then((a) => send(res, a), (err) => fail(res, err))
  else send(res, answer)
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {Answer} answer
 */
function send (res, answer) {
  if (answer.json === undefined) {
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  } else {
    res.writeHead(answer.status, JSON_HEADERS)
    res.end(JSON.stringify(answer.json))
  }
}

/**
 * A coded error as JSON, with its HTTP status (500 for anything else thrown).
 * @param {import('node:http').ServerResponse} res
 * @param {unknown} err
 */
function fail (res, err) {
  const { status, code, message } = /** @type {Partial<MayghError>} */ (err)
  send(res, json(status ?? 500, { error: { code, message } }))
}
