/**
 * A slice of a real access log, as the crowd replays it: read by the
 * simulator's own trace reader (so both see the same requests, flags and
 * clients), cut to a window of time, and grouped per client into sessions
 * (the simulator's session gap) and page views (sim/src/page-views.js, the
 * rule the simulator's model uses). Each page view becomes a page of the
 * replay site that embeds the assets its client fetched in that view.
 *
 * One size per URL: the largest the slice logs for it (a smaller figure is a
 * transfer the client cut short). The slice can be written back as the CSV
 * the simulator reads (`toCsv`), with those sizes, so that the simulator
 * replays exactly what the crowd does.
 */
import { ERRORS, MayghError } from '../../protocol/index.js'
import { FLAG_ASSET, FLAG_MEDIA, FLAG_PAGE } from '../../sim/src/batch.js'
import { SIM_DEFAULTS } from '../../sim/src/config.js'
import { startsPageView } from '../../sim/src/page-views.js'
import { TraceReader } from '../../sim/src/input/trace-reader.js'
import { contentType } from '../../client/manifest.js'

/** Paths the replay site keeps for itself: a log URL under them is left out. */
const RESERVED = /^\/(?:_view\/|maygh[.-])/

/**
 * @typedef {object} Request one request of the slice, as the simulator reads it
 * @property {number} t log time, seconds since the Unix epoch
 * @property {string} client
 * @property {string} url path (and query) as the replay site serves it
 * @property {number} bytes the size the slice uses for this URL (0: a 304 page view)
 * @property {number} flags the trace reader's (FLAG_ASSET, FLAG_PAGE, FLAG_MEDIA)
 */
/**
 * @typedef {object} View one page view of one client
 * @property {number} id
 * @property {string} client
 * @property {number} t log time of its first request
 * @property {string} path the replay site's page for it (`/_view/<id>`)
 * @property {number} htmlBytes the page's HTML as the log gives it (0: the log shows none, or a 304)
 * @property {{ url: string, bytes: number, media: boolean }[]} assets what the page embeds, in log order
 * @property {{ url: string, bytes: number }[]} others the view's other requests (downloads, CGI, errors with a body)
 * @property {number} leaveAt log time the page closes: the client's next view, or `linger` after its session's last request
 * @property {boolean} last whether it is the last view of its client's session
 */
/**
 * @typedef {object} Slice
 * @property {string} trace
 * @property {number} start log time of the slice's first request
 * @property {number} end log time of its last
 * @property {Request[]} requests
 * @property {View[]} views in order of time
 * @property {Map<string, View[]>} clients each client's views
 * @property {Map<string, { bytes: number, type: string }>} assets
 * @property {Map<string, number>} others
 * @property {{ requests: number, bytes: number, leftOut: number }} totals `leftOut`: requests of reserved paths
 */

/**
 * @param {string} path a log file (`../shared/traces/…`): CLF, EPA or CSV, plain, gzip or zip
 * @param {object} [o]
 * @param {number} [o.from] seconds after the log's first request where the slice begins
 * @param {number} [o.duration] seconds of log the slice spans (default: to the end)
 * @param {number} [o.linger] seconds a client stays on its last page after its session's last request (the simulator's `linger`)
 * @param {number} [o.sessionGap] a longer pause ends a client's session (the simulator's `sessionGap`)
 * @returns {Promise<Slice>}
 */
export async function readSlice (path, { from = 0, duration = Infinity, linger = SIM_DEFAULTS.linger, sessionGap = SIM_DEFAULTS.sessionGap } = {}) {
  if (!(from >= 0) || !(duration > 0)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `a slice needs from ≥ 0 and duration > 0 (got ${from}, ${duration})`)
  const reader = new TraceReader(path, { orderTolerance: Infinity })
  /** @type {{ t: number, client: number, url: number, bytes: number, flags: number }[]} */
  const raw = []
  let first = NaN
  for await (const b of reader.batches()) {
    for (let i = 0; i < b.n; i++) {
      if (Number.isNaN(first)) first = b.ts[i]
      const t = b.ts[i] - first
      if (t >= from && t < from + duration) raw.push({ t: b.ts[i], client: b.client[i], url: b.object[i], bytes: b.bytes[i], flags: b.flags[i] })
    }
  }
  if (!raw.length) throw new MayghError(ERRORS.MGH_SIM_ERR_EMPTY, `${path}: no request between ${from} s and ${from + duration} s after its first`)
  raw.sort((a, b) => a.t - b.t)

  // URLs as the site serves them, and one size each: the largest logged.
  /** @type {Map<number, string | null>} */
  const paths = new Map()
  const pathOf = (/** @type {number} */ id) => {
    let p = paths.get(id)
    if (p === undefined) {
      try {
        const u = new URL(reader.urls.string(id), 'http://log.invalid')
        p = RESERVED.test(u.pathname) ? null : u.pathname + u.search
      } catch {
        p = null
      }
      paths.set(id, p)
    }
    return p
  }
  /** @type {Map<string, number>} */
  const size = new Map()
  for (const r of raw) {
    const p = pathOf(r.url)
    if (p !== null && !(r.flags & FLAG_PAGE)) size.set(p, Math.max(size.get(p) ?? 0, r.bytes))
  }

  /** @type {Slice} */
  const slice = { trace: path, start: raw[0].t, end: raw[raw.length - 1].t, requests: [], views: [], clients: new Map(), assets: new Map(), others: new Map(), totals: { requests: 0, bytes: 0, leftOut: 0 } }
  /** per client: its open view, and the time of its last request */
  /** @type {Map<number, { view: View | null, last: number }>} */
  const state = new Map()
  const close = (/** @type {View | null} */ view, /** @type {number} */ at, /** @type {boolean} */ last) => {
    if (!view) return
    view.leaveAt = at
    view.last = last
  }
  for (const r of raw) {
    const url = pathOf(r.url)
    if (url === null) {
      slice.totals.leftOut++
      continue
    }
    const name = `c${r.client}`
    let s = state.get(r.client)
    if (!s) state.set(r.client, (s = { view: null, last: -Infinity }))
    const sinceLast = r.t - s.last
    if (sinceLast > sessionGap) {
      close(s.view, s.last + linger, true)
      s.view = null
    }
    if (!s.view || startsPageView(r.flags, s.view ? sinceLast : Infinity)) {
      close(s.view, r.t, false)
      const view = s.view = { id: slice.views.length, client: name, t: r.t, path: `/_view/${slice.views.length}`, htmlBytes: 0, assets: [], others: [], leaveAt: Infinity, last: false }
      slice.views.push(view)
      const mine = slice.clients.get(name) ?? []
      mine.push(view)
      slice.clients.set(name, mine)
    }
    s.last = r.t
    const view = /** @type {View} */ (s.view)
    let bytes = r.bytes
    if (r.flags & FLAG_PAGE) {
      // A page view's HTML: its own, whatever size the log gives.
      if (view.htmlBytes === 0) view.htmlBytes = r.bytes
      else view.others.push({ url, bytes })
    } else if (r.flags & FLAG_ASSET) {
      bytes = /** @type {number} */ (size.get(url))
      view.assets.push({ url, bytes, media: (r.flags & FLAG_MEDIA) !== 0 })
      slice.assets.set(url, { bytes, type: contentType(url.replace(/\?.*/, '')) })
    } else if (r.bytes > 0) {
      bytes = /** @type {number} */ (size.get(url))
      view.others.push({ url, bytes })
      slice.others.set(url, bytes)
    }
    slice.requests.push({ t: r.t, client: name, url, bytes, flags: r.flags })
    slice.totals.requests++
    slice.totals.bytes += bytes
  }
  for (const s of state.values()) close(s.view, s.last + linger, true)
  return slice
}

/**
 * The slice as the CSV the simulator reads (`ts_unix,client,url,status,bytes,method`):
 * the crowd's requests, with the sizes it uses, and statuses that make the
 * simulator's reader flag each as the slice did: a page view 200 (304 when
 * it has no body), an asset 200, anything else with a body 404 (its bytes go
 * to the origin whatever its URL looks like), without one 304.
 * @param {Slice} slice
 * @returns {string}
 */
export function toCsv (slice) {
  const lines = ['ts_unix,client,url,status,bytes,method']
  for (const r of slice.requests) {
    const status = r.flags & (FLAG_PAGE | FLAG_ASSET) ? (r.bytes > 0 ? 200 : 304) : r.bytes > 0 ? 404 : 304
    lines.push(`${r.t},${r.client},"${r.url.replace(/"/g, '""')}",${status},${r.bytes},GET`)
  }
  return lines.join('\n') + '\n'
}
