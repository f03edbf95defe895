/* global HTMLImageElement, RTCPeerConnection, WebSocket, ServiceWorker, innerHeight, innerWidth -- used inside page callbacks, which run in the browser */
/**
 * Where a page's time goes (bench/page-load.js `--timeline`): each visit's
 * steps, ms from its navigation, read from outside the client (its
 * WebSocket's frames, its worker messages, its data channels, resource
 * timing), so that the client carries no probe of its own. Per scenario the
 * medians over the maygh visits:
 *
 *   html        the page's response ended
 *   script      maygh.js's response ended (from the HTTP cache: no origin round trip)
 *   exec        maygh.js began to run (it starts its worker messages)
 *   imgReq      the first image request reached the worker (resource timing's workerStart)
 *   hello       the page's script said hello to its worker
 *   via         the worker said its own coordinator socket is up (worker-socket.js)
 *   expect      the worker's `expect` reached the page (it will be asked for peer bytes)
 *   invited     the worker's `invited` reached the page (holders it invited to make offers for it)
 *   get         the worker's first `get` reached the page (a request waiting for peers)
 *   wsNew       the client made its coordinator socket
 *   ws          the coordinator's socket opened
 *   join        the join went out
 *   welcome     the welcome came in
 *   lookup      the first lookup went out (over the page's socket or its worker's)
 *   holders     its reply came in
 *   viaWorker   1 when the first lookup went through the worker's socket, else 0
 *   offers      how many offers the first lookup carried
 *   channel     the first data channel opened
 *   imgResp     the first image's response began (the worker answered)
 *   img1        the first image of the viewport showed
 *   lcpImg      the largest contentful paint's element showed (its `load`)
 *   viewport    the viewport's last image showed
 *   lcp         the largest contentful paint
 * and, for the origin-only visits beside them, html, img1, viewport, lcp.
 */
import { percentile } from './stats.js'

/**
 * Runs in each measured page before its own scripts (after instrumentPage):
 * marks the steps above on `__pageTimeline`.
 */
export function recordTimeline () {
  /** @type {Record<string, number>} */
  const at = {}
  const mark = (/** @type {string} */ step) => { if (!(step in at)) at[step] = performance.now() }
  Object.defineProperty(globalThis, '__pageTimeline', { value: at })
  /** @type {[number, number][]} the page's long tasks (> 50 ms on its main thread): start, end */
  const long = []
  Object.defineProperty(globalThis, '__pageLongTasks', { value: long })
  if ((PerformanceObserver.supportedEntryTypes ?? []).includes('longtask')) {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push([e.startTime, e.startTime + e.duration]) }).observe({ type: 'longtask', buffered: true })
  }
  const NativeSocket = WebSocket
  // A subclass: the client's `new WebSocket(url)` and its `instanceof` still work.
  globalThis.WebSocket = class extends NativeSocket {
    /** @param {string | URL} url @param {string | string[]} [protocols] */
    constructor (url, protocols) {
      mark('wsNew')
      super(url, protocols)
      this.addEventListener('open', () => mark('ws'))
      this.addEventListener('message', (/** @type {MessageEvent} */ e) => {
        try {
          const m = JSON.parse(String(e.data))
          if (m.type === 'welcome') mark('welcome')
          if (m.type === 'holders') mark('holders')
        } catch {}
      })
    }

    /** @param {any} data */
    send (data) {
      try {
        const m = JSON.parse(String(data))
        if (m.type === 'join') mark('join')
        if (m.type === 'lookup' && !('lookup' in at)) {
          mark('lookup')
          at.viaWorker = 0
          at.offers = m.offers?.length ?? 0
        }
      } catch {}
      super.send(data)
    }
  }
  if (typeof RTCPeerConnection === 'function') {
    const create = RTCPeerConnection.prototype.createDataChannel
    RTCPeerConnection.prototype.createDataChannel = function (...args) {
      const channel = create.apply(this, /** @type {any} */ (args))
      channel.addEventListener('open', () => mark('channel'))
      return channel
    }
    const NativePeer = RTCPeerConnection
    globalThis.RTCPeerConnection = class extends NativePeer {
      /** @param {RTCConfiguration} [config] */
      constructor (config) {
        super(config)
        this.addEventListener('datachannel', (e) => e.channel.addEventListener('open', () => mark('channel')))
      }
    }
  }
  if (typeof ServiceWorker === 'function') {
    const post = ServiceWorker.prototype.postMessage
    ServiceWorker.prototype.postMessage = function (/** @type {any} */ msg, /** @type {any} */ ...rest) {
      if (msg?.maygh === 'hello') mark('hello')
      if (msg?.maygh === 'frame' && msg.msg?.type === 'lookup' && !('lookup' in at)) {
        mark('lookup')
        at.viaWorker = 1
        at.offers = msg.msg.offers?.length ?? 0
      }
      return post.call(this, msg, ...rest)
    }
    const start = navigator.serviceWorker?.startMessages
    if (start) {
      navigator.serviceWorker.startMessages = function () {
        mark('exec')
        return start.call(this)
      }
    }
    navigator.serviceWorker?.addEventListener('message', (e) => {
      if (e.data?.maygh === 'get') mark('get')
      if (e.data?.maygh === 'expect') mark('expect')
      if (e.data?.maygh === 'invited') mark('invited')
      if (e.data?.maygh === 'via' && e.data.id) mark('via')
      if (e.data?.maygh === 'frame' && e.data.msg?.type === 'holders') mark('holders')
    })
  }
}

/**
 * In the page, once all images show: the steps' times, rounded, and the
 * resources' and images' from the page's own records.
 * @returns {Record<string, number>}
 */
export function readTimeline () {
  const g = /** @type {any} */ (globalThis)
  /** @type {Record<string, number>} */
  const out = { ...(g.__pageTimeline ?? {}) }
  const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType('navigation')[0])
  if (nav) out.html = nav.responseEnd
  const script = performance.getEntriesByType('resource').find((e) => /\/maygh(-elements)?\.js(\?|$)/.test(e.name))
  if (script) out.script = /** @type {PerformanceResourceTiming} */ (script).responseEnd
  const images = /** @type {PerformanceResourceTiming[]} */ (performance.getEntriesByType('resource')).filter((e) => e.initiatorType === 'img')
  const reached = images.map((e) => e.workerStart).filter((t) => t > 0)
  if (reached.length) out.imgReq = Math.min(...reached)
  if (images.length) out.imgResp = Math.min(...images.map((e) => e.responseStart).filter((t) => t > 0))
  const shown = /** @type {WeakMap<HTMLImageElement, number>} */ (g.__pageLoadBench.shown)
  const inView = [...document.querySelectorAll('main img')].filter((img) => {
    const r = img.getBoundingClientRect()
    return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth
  })
  const times = /** @type {number[]} */ (inView.map((img) => shown.get(/** @type {HTMLImageElement} */ (img))).filter((t) => t !== undefined))
  if (times.length) {
    out.img1 = Math.min(...times)
    out.viewport = Math.max(...times)
  }
  const lcpElement = g.__pageLoadBench.lcp.element
  if (lcpElement instanceof HTMLImageElement && shown.has(lcpElement)) out.lcpImg = /** @type {number} */ (shown.get(lcpElement))
  if (g.__pageLoadBench.lcp.last !== null) out.lcp = g.__pageLoadBench.lcp.last
  // Main-thread time taken by long tasks before the first image showed.
  const long = /** @type {[number, number][]} */ (g.__pageLongTasks ?? [])
  if (long.length) {
    out.busy = long.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, out.img1 ?? Infinity) - a), 0)
    out.longFrom = long[0][0]
    out.longTo = long[0][1]
  }
  for (const k of Object.keys(out)) out[k] = Math.round(out[k])
  return out
}

/** The steps in the order a page meets them. */
const STEPS = ['html', 'script', 'exec', 'imgReq', 'hello', 'expect', 'via', 'invited', 'get', 'wsNew', 'ws', 'join', 'welcome', 'lookup', 'holders', 'viaWorker', 'offers', 'channel', 'imgResp', 'img1', 'lcpImg', 'viewport', 'lcp', 'busy', 'longFrom', 'longTo']

/**
 * Median of each step over the visits that reached it.
 * @param {Record<string, number>[]} visits
 * @returns {Record<string, number>}
 */
export function medianTimeline (visits) {
  /** @type {Record<string, number>} */
  const out = {}
  for (const step of STEPS) {
    const xs = visits.map((v) => v[step]).filter((x) => typeof x === 'number')
    // the lower median (bench/stats.js): the README's timelines were printed with it
    if (xs.length) out[step] = percentile(xs, 0.5)
  }
  return out
}

/**
 * One line per scenario: the median steps of its maygh visits, then its origin-only ones'.
 * @param {string} label
 * @param {{ maygh: Record<string, number>, none: Record<string, number> }} medians
 */
export function timelineLine (label, { maygh, none }) {
  const show = (/** @type {Record<string, number>} */ m) => STEPS.filter((s) => s in m).map((s) => `${s} ${m[s]}`).join(' · ')
  return `${label.padEnd(22)} maygh: ${show(maygh)}\n${''.padEnd(22)} origin-only: ${show(none)}`
}
