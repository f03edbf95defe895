/* global RTCPeerConnection, WebSocket */
/**
 * A visitor of the crowd replay in a real browser (Chromium or Firefox,
 * through playwright-core): a browser context of its own (its own service
 * worker, IndexedDB and HTTP cache, kept across its page views and
 * sessions), one tab that opens each of its page views and, when its visit
 * ends, leaves the site. Same surface as node-visitor.js, so the crowd
 * treats both alike. What each page got from peers, its own store and the
 * origin is read from the page's `Maygh.stats()` (after `Maygh.idle()`, so a
 * first view's adoption is in); audio, video and other files do not go
 * through maygh and are counted as the origin's.
 */
import { launchBrowser } from '../../test/support/browsers.js'

export class BrowserVisitor {
  /**
   * @param {object} o
   * @param {import('playwright-core').Browser} o.browser
   * @param {string} o.site the replay site's URL
   * @param {string} o.name
   * @param {string} o.token the visitor's join token (the page's `data-token`)
   * @param {boolean} [o.untraversable] behind a NAT no peer reaches: its pages' peer connections hide their candidates
   */
  constructor (o) {
    this.o = o
    this.kind = o.browser.browserType().name()
    /** @type {import('playwright-core').BrowserContext | null} */
    this.context = null
    /** @type {import('playwright-core').Page | null} */
    this.tab = null
    this.views = 0
    /** @type {string[]} console errors and page errors, for the report */
    this.logs = []
    /** @type {Record<string, string[]>} the first few messages of each error code its pages met (`Maygh.on('error')`) */
    this.samples = {}
  }

  async open () {
    if (this.tab) return this.tab
    const context = this.context = await this.o.browser.newContext()
    const tab = this.tab = await context.newPage()
    tab.on('pageerror', (err) => this.logs.push(`pageerror: ${err.message}`))
    await tab.addInitScript(countSetups)
    await tab.addInitScript(collectErrors)
    if (this.o.untraversable) await tab.addInitScript(hideCandidates)
    return tab
  }

  /**
   * @param {string} path
   * @param {{ url: string, bytes: number, media: boolean }[]} assets
   * @param {{ url: string, bytes: number }[]} [others]
   * @param {object} [_how] what a Node visitor is told of the page (a browser finds out for itself)
   * @returns {Promise<import('./node-visitor.js').ViewResult>}
   */
  async view (path, assets, others = [], _how = {}) {
    const tab = await this.open()
    const first = this.views++ === 0
    await tab.goto(`${this.o.site}${path}?token=${encodeURIComponent(this.o.token)}`)
    const done = /** @type {{ ms: number }} */ (await tab.evaluate(() => /** @type {any} */ (globalThis).replayDone))
    const s = await tab.evaluate(async () => {
      const m = /** @type {any} */ (globalThis).Maygh
      await m.idle()
      return { ...m.stats(), setups: /** @type {any} */ (globalThis).mayghSetups, said: /** @type {any} */ (globalThis).mayghErrors ?? [] }
    })
    for (const { code, message } of s.said) {
      const seen = (this.samples[code] ??= [])
      if (seen.length < 3 && !seen.includes(message)) seen.push(message)
    }
    // Audio and video are counted as any asset (the worker answers their Range requests, and adopts a
    // first view's as the rest since issue 26); what maygh never sees, here.
    let direct = 0
    for (const o of others) direct += o.bytes
    return { ms: done.ms, first, bytes: { peer: s.peer.bytes, cache: s.cache.bytes, origin: s.origin.bytes + direct }, failed: s.failed, errors: { ...s.errors, ...(s.rejected && { rejected: s.rejected }) }, kind: this.kind, setups: s.setups }
  }

  /** The visitor leaves the site: its page closes (the worker and its store stay in the browser). */
  leave () {
    this.tab?.goto('about:blank').catch(() => {})
  }

  async close () {
    await this.context?.close().catch(() => {})
  }
}

/**
 * In the page, before anything runs: count the peer connections it sets up
 * (the offers its coordinator socket sends), as a Node visitor does.
 */
function countSetups () {
  const g = /** @type {any} */ (globalThis)
  g.mayghSetups = 0
  const send = WebSocket.prototype.send
  WebSocket.prototype.send = function (/** @type {any} */ data) {
    // offers, in a `connect` or carried by a lookup (protocol 3)
    if (typeof data === 'string') g.mayghSetups += data.split('"type":"offer"').length - 1
    return send.call(this, data)
  }
}

/**
 * In the page, before anything runs: what goes wrong, with its message (the
 * stats count codes only), from the moment the page script defines `Maygh`.
 */
function collectErrors () {
  const g = /** @type {any} */ (globalThis)
  g.mayghErrors = []
  let tries = 0
  const hook = setInterval(() => {
    if (!g.Maygh && ++tries < 2000) return
    clearInterval(hook)
    g.Maygh?.on('error', (/** @type {{ code: string, message: string }} */ e) => { if (g.mayghErrors.length < 50) g.mayghErrors.push({ code: e.code, message: e.message }) })
  }, 5)
}

/**
 * In the page, before anything runs: peer connections behind a NAT nobody
 * can reach (as node-visitor.js's): no candidate of their own goes out, in a
 * trickle or in the description, and none of the other side's is taken.
 */
export function hideCandidates () {
  const Base = RTCPeerConnection
  const strip = (/** @type {any} */ d) => d && { type: d.type, sdp: String(d.sdp).replace(/^a=candidate:.*\r?\n/gm, '') }
  class Hidden extends Base {
    /** @param {RTCConfiguration} [config] */
    constructor (config) {
      super(config)
      this.addEventListener('icecandidate', (e) => { if (e.candidate) e.stopImmediatePropagation() })
    }

    /** @param {any} [o] */
    async createOffer (o) { return strip(await super.createOffer(o)) }
    /** @param {any} [o] */
    async createAnswer (o) { return strip(await super.createAnswer(o)) }
    /** @param {any} d */
    setRemoteDescription (d) { return super.setRemoteDescription(strip(d)) }
    async addIceCandidate () {}
    get onicecandidate () { return null }
    /** @param {any} fn */
    set onicecandidate (fn) { this.addEventListener('icecandidate', (e) => { if (!e.candidate) fn(e) }) }
  }
  Object.defineProperty(globalThis, 'RTCPeerConnection', { value: Hidden, configurable: true, writable: true })
}

/**
 * Launch the crowd's browsers.
 * @param {number} n how many, Chromium and Firefox in turn
 * @returns {Promise<import('playwright-core').Browser[]>}
 */
export async function launchBrowsers (n) {
  return Promise.all(Array.from({ length: n }, (_, i) => launchBrowser(i % 2 === 0 ? 'chromium' : 'firefox')))
}
