/**
 * A visitor of the crowd replay run in Node: the client's own page-side code
 * (signaling, announcer, peer pool, transfers, SHA-256 verification, the
 * loader and its hedge, the uplink rules, usage reports: client/src/) over
 * `@roamhq/wrtc`, with what a browser would give it handed in: a WebSocket
 * that says which site the page is from, an in-memory IndexedDB
 * (fake-indexeddb) under the client's own Cache, storage, and a connection
 * pool of its own to the origin (a browser's six connections per host).
 *
 * It behaves as a browser in transparent mode (the default): the store, the
 * manifest and the origin clock belong to the service worker and outlive
 * pages; the coordinator connection and the peer channels belong to the page
 * and close with it. A visitor's first page view ever is not under the
 * worker: its assets load from the origin, then the page hands them to the
 * worker, which stores and so announces them ("adopt"; a browser reads them
 * back from its HTTP cache, here the bytes just fetched are kept). Audio and
 * video are asked for with `Range`, which the worker leaves to the network.
 * A visitor behind a NAT that cannot be traversed gathers no usable ICE
 * candidate and ignores the other side's: every connection to or from it fails.
 */
import { IDBFactory } from 'fake-indexeddb'
import { Agent, fetch as fetchWith } from 'undici'
import wrtc from '@roamhq/wrtc'
import { WebSocket as WsSocket } from 'ws'
import { readConfig } from '../../client/src/config.js'
import { Cache } from '../../client/src/cache.js'
import { Names } from '../../client/src/names.js'
import { OriginClock } from '../../client/src/hedge.js'
import { FLAG_BLOCKING } from '../../sim/src/batch.js'
import { replayPriority } from '../../sim/src/client-timing.js'
import { SIM_DEFAULTS } from '../../sim/src/config.js'
import { isBlockingUrl } from '../../sim/src/input/static-assets.js'
import { Loader } from '../../client/src/loader.js'
import { startPeers } from '../../client/src/peers.js'
import { matches } from '../../protocol/index.js'

/**
 * The browser global the client's modules read without a handed-in platform:
 * `location`, to resolve URLs. A process hosts the visitors of one site at a
 * time (a crowd run), so each run sets it to its site.
 * @param {string} siteUrl
 */
export function installSite (siteUrl) {
  Object.defineProperty(globalThis, 'location', { value: new URL(siteUrl), configurable: true, writable: true })
}

/** Storage as a page has it (localStorage, sessionStorage), in memory. */
class MemoryStorage {
  constructor () { this.items = new Map() }
  /** @param {string} k */
  getItem (k) { return this.items.get(k) ?? null }
  /** @param {string} k @param {string} v */
  setItem (k, v) { this.items.set(k, String(v)) }
  /** @param {string} k */
  removeItem (k) { this.items.delete(k) }
}

/**
 * A peer connection behind a NAT that cannot be traversed: it tells the other
 * side no address of its own (no trickled candidate, none in its description)
 * and takes none of the other side's, so ICE never finds a pair and the
 * channel never opens.
 * @param {typeof RTCPeerConnection} Base
 * @returns {typeof RTCPeerConnection}
 */
function untraversable (Base) {
  const strip = (/** @type {any} */ d) => d && { type: d.type, sdp: String(d.sdp).replace(/^a=candidate:.*\r?\n/gm, '') }
  // wrtc defines its state as fixed properties of each instance, so the wrapper is a proxy, not a subclass.
  /** @type {any} */
  const Wrapped = function (/** @type {RTCConfiguration} */ config) {
    const pc = new Base(config)
    return new Proxy(pc, {
      get (target, key) {
        // (the client sends the description it created; it never reads `localDescription`, which can crash wrtc)
        if (key === 'createOffer' || key === 'createAnswer') return async () => strip(await target[key]())
        if (key === 'addIceCandidate') return async () => {}
        if (key === 'setRemoteDescription') return (/** @type {any} */ d) => target.setRemoteDescription(strip(d))
        const value = Reflect.get(target, key, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
      set (target, key, value) {
        const drop = key === 'onicecandidate' && typeof value === 'function'
        return Reflect.set(target, key, drop ? (/** @type {any} */ e) => { if (!e.candidate) value(e) } : value, target)
      }
    })
  }
  return Wrapped
}

/**
 * @typedef {object} AssetResult
 * @property {string} url
 * @property {'peer' | 'origin' | 'cache' | 'failed'} source
 * @property {number} bytes
 * @property {number} ms from the page's start until this asset was in
 */
/**
 * @typedef {object} ViewResult
 * @property {number} ms until every asset of the page was in
 * @property {boolean} first whether it was the visitor's first page view (not under the worker)
 * @property {{ peer: number, cache: number, origin: number }} bytes the page's assets and files by where they came from
 * @property {number} failed loads that failed everywhere
 * @property {Record<string, number>} errors the page's failed steps by code (a peer timing out, a miss, bad bytes: `Maygh.stats().errors`), and `rejected`: peer bytes that failed SHA-256
 * @property {string} kind 'node', 'chromium' or 'firefox'
 * @property {number} setups peer connections the page set up (offers it made: in a `connect`, or carried by a lookup)
 * @property {AssetResult[]} [assets] each load (Node visitors)
 */

/**
 * @param {number} ms
 * @param {boolean} first
 * @param {AssetResult[]} assets
 * @returns {ViewResult}
 */
function summed (ms, first, assets) {
  const bytes = { peer: 0, cache: 0, origin: 0 }
  let failed = 0
  for (const a of assets) {
    if (a.source === 'failed') failed++
    else bytes[a.source] += a.bytes
  }
  return { ms, first, bytes, failed, errors: {}, kind: 'node', setups: 0, assets }
}

export class NodeVisitor {
  /**
   * @param {object} o
   * @param {string} o.site the site's URL (its origin; installSite must name the same)
   * @param {string} o.name the visitor's name (for its join token and logs)
   * @param {Record<string, string>} o.data the script tag's `data-` attributes, camelCase (`coordinator`, `token`, …)
   * @param {boolean} [o.untraversable] behind a NAT no peer can reach
   * @param {{ saveData?: boolean, type?: string }} [o.connection] what `navigator.connection` says (Save-Data, cellular: receive-only)
   * @param {string} [o.localAddress] the address its coordinator socket comes from (127.x.y.z: per-address limits see distinct clients)
   * @param {boolean} [o.plain] a visitor of the same site without the script: every request goes to the origin
   * @param {'corrupt' | 'miss'} [o.liar] a lying peer: it announces what it holds, then serves it with a byte
   *   flipped (after its own check, as a tampered page would), or says `miss`
   */
  constructor (o) {
    this.o = o
    this.origin = new URL(o.site).origin
    this.config = readConfig(o.data)
    /** the origin, over connections of its own (six, as a browser opens per host) */
    this.agent = new Agent({ connections: 6 })
    const { origin, localAddress } = { origin: this.origin, localAddress: o.localAddress }
    /** peer connections this visitor's pages set up (offers sent through the coordinator) */
    this.setups = 0
    const visitor = this
    /** @type {import('../../client/src/peers.js').PageEnv} */
    this.env = {
      WebSocket: /** @type {any} */ (class extends WsSocket {
        /** @param {string} url */
        constructor (url) {
          super(url, [], { origin, localAddress })
          // A browser's socket closed while connecting fires `error` and `close`; ws throws without a listener.
          this.on('error', () => {})
        }

        /** @param {any} data */
        send (data) {
          // offers, in a `connect` or carried by a lookup (protocol 3)
          if (typeof data === 'string') visitor.setups += data.split('"type":"offer"').length - 1
          super.send(data)
        }
      }),
      RTCPeerConnection: o.untraversable ? untraversable(wrtc.RTCPeerConnection) : wrtc.RTCPeerConnection,
      localStorage: /** @type {any} */ (new MemoryStorage()),
      sessionStorage: /** @type {any} */ (new MemoryStorage()),
      navigator: /** @type {any} */ ({ connection: o.connection ?? {} })
    }
    /** @type {ReturnType<typeof startPeers> | null} the open page's sharing side */
    this.page = null
    // The worker's part: store, manifest, origin clock.
    this.cache = new Cache({ quotaBytes: this.config.quotaMb * 1048576, indexedDB: new IDBFactory(), onChange: () => this.page?.changed() })
    this.cacheReady = this.cache.open()
    this.names = new Names(this.config.manifest)
    this.clock = new OriginClock(this.config)
    this.loader = new Loader({ names: this.names, cache: this.cache, cacheReady: this.cacheReady, clock: this.clock })
    this.views = 0
    /** @type {Set<Promise<void>>} a first view's assets being adopted */
    this.adopting = new Set()
    /** @type {Record<string, string[]>} the first few messages of each error code its pages met */
    this.samples = {}
  }

  /**
   * A request to the origin over this visitor's own connections.
   * @param {string} url
   * @param {RequestInit} [init]
   * @returns {Promise<Response>}
   */
  fetch (url, init) {
    return /** @type {any} */ (fetchWith(new URL(url, this.origin), /** @type {any} */ ({ ...init, dispatcher: this.agent })))
  }

  /**
   * Open a page: the previous one closes, this one loads its assets (all at
   * once, as a browser does) and stays open, serving peers, until the next
   * view or {@link leave}.
   * @param {string} path the page's URL path (its HTML comes from the origin)
   * @param {{ url: string, media: boolean }[]} assets what the page embeds
   * @param {{ url: string }[]} [others] what else the page asks for (downloads, CGI): the origin's, never maygh's
   * @param {{ cached?: boolean }} [how] `cached`: the page's HTML is in the browser's cache (the
   *   log shows none, or a 304): its request costs a round trip and no body (a HEAD here)
   * @returns {Promise<ViewResult>}
   */
  async view (path, assets, others = [], { cached = false } = {}) {
    this.leave()
    const t0 = performance.now()
    const first = this.views++ === 0
    const nav = await this.fetch(path, { method: cached ? 'HEAD' : 'GET' })
    const ttfb = performance.now() - t0
    await nav.arrayBuffer()
    if (this.o.plain) return this.plainView(t0, [...assets, ...others])
    const setups = this.setups
    const page = this.page = startPeers(this.config, { holdings: () => this.cache.hashes(), read: (h) => this.serve(h), opened: this.cacheReady }, this.env)
    // What went wrong on the way, with the messages of the first few of each kind (for the run's report).
    page.stats.on('error', (/** @type {{ code: string, message: string }} */ e) => {
      const seen = (this.samples[e.code] ??= [])
      if (seen.length < 3 && !seen.includes(e.message)) seen.push(e.message)
    })
    // The worker hears the page's time to first byte in its `hello`.
    this.clock.observe(ttfb)
    const done = (/** @type {string} */ url, /** @type {AssetResult['source']} */ source, /** @type {number} */ bytes) => ({ url, source, bytes, ms: performance.now() - t0 })
    /** @param {string} url */
    const plain = async (url) => {
      const res = await this.fetch(url, { headers: { range: 'bytes=0-' } })
      const bytes = new Uint8Array(await res.arrayBuffer())
      return { res, bytes }
    }
    const loaded = Promise.all(others.map(({ url }) => this.plain(url, t0)))
    const results = await Promise.all(assets.map(async ({ url }, index) => {
      try {
        // Uncontrolled (the first view): the network, as without maygh. (Media asks with a Range, which
        // the worker answers from the store and peers since issue 26: from then on as any asset.)
        if (first) {
          const { res, bytes } = await plain(url)
          if (!res.ok) return done(url, 'failed', 0)
          // The worker adopts them after the page has them (media too: the page hands it every URL it
          // loaded): the page does not wait for it (synced does).
          this.adopting.add(this.adopt(url, bytes, page.stats).catch(() => {}))
          return done(url, 'origin', bytes.length)
        }
        const name = await this.names.get(url)
        if (!name) {
          const { res, bytes } = await plain(url)
          return done(url, res.ok ? 'origin' : 'failed', bytes.length)
        }
        let source = /** @type {AssetResult['source']} */ ('origin')
        const stats = {
          /** @param {{ source: 'peer' | 'origin' | 'cache' }} e */
          loaded: (e) => { source = e.source; page.stats.loaded(/** @type {any} */ (e)) },
          error: (/** @type {any} */ e) => page.stats.error(e),
          failed: () => page.stats.failed()
        }
        // Where the asset sits on its page, as the simulator guesses it (a log does not say): the hedge rule weighs it.
        const priority = replayPriority(isBlockingUrl(url) ? FLAG_BLOCKING : 0, index, SIM_DEFAULTS.viewportAssets)
        const { bytes } = await this.loader.named(url, name, { stats, peers: page.peers, origin: (signal) => this.fetch(url, { signal }), priority: () => priority })
        return done(url, source, bytes.length)
      } catch {
        return done(url, 'failed', 0)
      }
    }))
    const { errors, rejected } = page.stats.counts
    return { ...summed(performance.now() - t0, first, [...results, ...await loaded]), errors: { ...errors, ...(rejected && { rejected }) }, setups: this.setups - setups }
  }

  /**
   * The page without maygh: everything from the origin.
   * @param {number} t0
   * @param {{ url: string }[]} urls
   * @returns {Promise<ViewResult>}
   */
  async plainView (t0, urls) {
    const assets = await Promise.all(urls.map(({ url }) => this.plain(url, t0)))
    return summed(performance.now() - t0, false, assets)
  }

  /**
   * One request to the origin, as without maygh.
   * @param {string} url
   * @param {number} t0 when its page started
   * @returns {Promise<AssetResult>}
   */
  async plain (url, t0) {
    try {
      const res = await this.fetch(url)
      const bytes = (await res.arrayBuffer()).byteLength
      return { url, source: res.ok ? 'origin' : 'failed', bytes, ms: performance.now() - t0 }
    } catch {
      return { url, source: 'failed', bytes: 0, ms: performance.now() - t0 }
    }
  }

  /**
   * What this visitor gives a peer that asks for `hash`: its store's verified bytes, unless it lies.
   * @param {string} hash
   */
  async serve (hash) {
    if (this.o.liar === 'miss') return null
    const asset = await this.cache.get(hash)
    if (asset && this.o.liar === 'corrupt' && asset.bytes.length) {
      const bytes = asset.bytes.slice()
      bytes[bytes.length >> 1] ^= 0x5a
      return { ...asset, bytes }
    }
    return asset
  }

  /**
   * What the worker does with a first view's assets: verify against the
   * manifest, store (and so announce), count as origin bytes.
   * @param {string} url
   * @param {Uint8Array<ArrayBuffer>} bytes
   * @param {import('../../client/src/stats.js').Stats} stats
   */
  async adopt (url, bytes, stats) {
    const name = await this.names.get(url)
    if (!name || this.cache.has(name.hash) || !(await matches(bytes, name.hash))) return
    await this.cacheReady
    await this.cache.put(name.hash, bytes, name.type ?? '', name.pieces)
    stats.loaded({ url, hash: name.hash, source: 'origin', bytes: bytes.length, ms: 0 })
  }

  /** Resolves once the coordinator has acknowledged what the open page holds. */
  async synced () {
    await Promise.all(this.adopting)
    this.adopting.clear()
    await this.page?.ready
    await this.page?.synced()
  }

  /** The page goes away (the visitor leaves the site, or opens another page). */
  leave () {
    this.page?.close()
    this.page = null
  }

  /** Leave and let go of the origin connections. */
  async close () {
    this.leave()
    await this.agent.close()
  }
}
