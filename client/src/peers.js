/**
 * The page's side of sharing, the same in both modes: the coordinator
 * connection, the peer connections, the announcer that keeps the
 * coordinator's list of our holdings current, the visitor's uplink settings,
 * and the `window.Maygh` API over them. Where the assets live is the
 * caller's: the page's own store (marked-element mode) or the service
 * worker's (transparent mode), given as `holdings` and `read`. The platform
 * (WebSocket, WebRTC, storage, page events) is the page's globals, or what a
 * host hands in as `env`: the crowd replay (swarm/) runs this same code in
 * Node peers.
 */
import { CLIENT_ERRORS } from '../../protocol/index.js'
import { coordinatorUrls } from './config.js'
import { Stats } from './stats.js'
import { Signaling } from './signaling.js'
import { Announcer } from './announcer.js'
import { PeerPool } from './peer-pool.js'
import { PeerFetch } from './peer-fetch.js'
import { Uplink } from './uplink.js'
import { Reach } from './reach.js'
import { UsageReport } from './usage-report.js'
import { read, write } from './storage.js'

/**
 * Where the page's platform comes from: a browser page's globals by default.
 * @typedef {{ WebSocket?: typeof WebSocket, RTCPeerConnection?: typeof RTCPeerConnection, localStorage?: Storage, sessionStorage?: Storage, navigator?: Navigator & { connection?: any }, addEventListener?: Function, document?: Document }} PageEnv
 */

/**
 * @param {Readonly<typeof import('./config.js').DEFAULTS>} config
 * @param {object} store
 * @param {() => string[]} store.holdings held hashes, most recently used first
 * @param {(hash: string) => Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string } | null>} store.read verified bytes to serve
 * @param {Promise<unknown>} store.opened resolves once `holdings` is known
 * @param {import('./worker-route.js').WorkerRoute} [store.relay] the worker's coordinator socket (transparent mode):
 *   the page's first lookups go that way while its own socket has not joined
 * @param {boolean} [store.verifiedLater] peer bytes are verified where they are handed (transparent mode: by the
 *   worker, which says `bad` of a mismatch): not on the page
 * @param {() => void} [store.off] the visitor opted out (transparent mode: its worker closes its socket)
 * @param {PageEnv} [env]
 */
export function startPeers (config, store, env = globalThis) {
  const stats = new Stats()
  // Peers need WebRTC and a coordinator; verification (and so storing and sharing) needs WebCrypto, i.e. a secure context.
  const urls = coordinatorUrls(config.coordinator)
  const why = !urls.length ? 'no data-coordinator' : !env.RTCPeerConnection ? 'no WebRTC' : !globalThis.crypto?.subtle ? 'not a secure context (HTTPS)' : ''
  if (why) console.info(`maygh: peers are off: ${why}`)
  // Whether this visitor shares: the site's mode, the visitor's choice, Save-Data, its upload budget.
  const uplink = new Uplink(config, env)
  const serving = () => uplink.serving()
  // Whether this visitor's channels open at all, across its pages. One whose channels have not been
  // opening lists nothing on this page (holders nobody reaches cost their askers the pass-over).
  const reach = new Reach(env.localStorage)
  const reached = !reach.unreached()
  /** what this visitor lists as held: nothing while it does not serve */
  const listed = () => reached && serving() ? store.holdings() : []

  const visitor = visitorKey(env.localStorage)
  const signaling = why ? null : new Signaling({ urls, token: config.token, visitor, WebSocket: env.WebSocket, backoffBaseMs: config.backoffBaseMs, backoffMaxMs: config.backoffMaxMs, getHave: listed, haveKnown: store.opened, ice: recalled(env.sessionStorage) })
  /**
   * Resolves true once joined; false at once when there is nothing to join, when
   * refused or when every coordinator is unreachable (loads do not wait), and
   * after `joinTimeoutMs` at the latest.
   * @type {Promise<boolean>}
   */
  const ready = new Promise((resolve) => {
    if (!signaling) return resolve(false)
    signaling.on('welcome', () => resolve(true))
    signaling.on('refused', () => resolve(false))
    signaling.on('unreachable', () => resolve(false))
    if (uplink.state().mode === 'off') return resolve(false)
    // The socket opens now; its join waits until the holdings are known (haveKnown).
    signaling.resume()
    store.opened.then(() => {
      setTimeout(() => resolve(false), config.joinTimeoutMs)
    })
  })

  /** @type {Announcer | null} */
  let announcer = null
  /** @type {PeerPool | null} */
  let pool = null
  /** @type {PeerFetch | null} */
  let fetcher = null
  /** @type {UsageReport | null} */
  let usage = null
  if (signaling) {
    const a = announcer = new Announcer({ signaling, holdings: listed, serving, delayMs: config.announceDelayMs })
    signaling.on('welcome', (/** @type {{ have: string[], url: string }} */ w) => {
      a.welcomed(w.have)
      stats.joined(w.url)
      write(env.sessionStorage, ICE_KEY, JSON.stringify(signaling.ice))
    })
    signaling.on('warning', (/** @type {{ code: string, message: string }} */ m) => stats.error({ code: m.code, message: m.message }))
    // Refused for good (this origin is not allowed, the token is bad): the site's owner reads why here, once.
    signaling.on('refused', (/** @type {{ code: string, message: string }} */ m) => console.warn(`maygh: peers are off: ${m.message} (${m.code}, page origin ${globalThis.location?.origin})`))
    // A visitor who shares nothing at all this page fetches nothing from peers either, the worker's way included.
    const relay = uplink.state().mode === 'off' ? null : store.relay ?? null
    const p = pool = new PeerPool({
      signaling,
      relay,
      config,
      env,
      serving,
      reach,
      // Checked per request: a peer still asking after we stopped serving gets `miss`.
      serve: async (hash) => serving() ? store.read(hash) : null,
      onServed: (peer, hash, bytes) => {
        stats.served({ peer, hash, bytes })
        uplink.spend(bytes)
      }
    })
    fetcher = new PeerFetch({ signaling, relay, pool, stats, ready, config, reach, verifiedLater: store.verifiedLater })
    if (config.usageMs > 0) usage = new UsageReport({ signaling, stats, intervalMs: config.usageMs, env })
    // Off: leave the coordinator (which lists nothing of ours from then on) and every peer.
    // Otherwise withdraw or announce at once, joining first if we had left.
    uplink.on('change', (/** @type {string} */ mode) => {
      if (mode === 'off') {
        signaling.stop()
        store.off?.()
        p.drop()
      } else {
        store.opened.then(() => signaling.resume())
        a.flush()
      }
    })
  }

  /** the API's parts that do not depend on where assets live */
  const api = {
    version: 1,
    config,
    ready,
    /** Stop sharing with other visitors, now and on later visits (no peers at all). */
    optOut () { uplink.choose('out') },
    /** Share with other visitors again (the site's budget and Save-Data still apply), now and on later visits. */
    optIn () { uplink.choose('in') },
    /** @param {string} type @param {Function} fn */
    on (type, fn) { stats.on(type, fn); return this },
    /** @param {string} type @param {Function} fn */
    off (type, fn) { stats.off(type, fn); return this },
    stats: () => ({
      ...stats.snapshot(),
      peerId: signaling?.id ?? null,
      joined: signaling?.joined ?? false,
      held: announcer?.held ?? 0,
      connected: pool?.connected().length ?? 0,
      uplink: { ...uplink.state(), sent: uplink.sent() },
      reach: { failedInRow: reach.count(), unreached: reach.unreached() }
    })
  }
  return {
    stats,
    why,
    ready,
    api,
    /** Who this page joins as: what its worker's socket joins with (worker-socket.js). */
    joinAs: () => ({ visitor, token: signaling?.token || undefined }),
    /** the holdings changed: announce them soon */
    changed: () => announcer?.schedule(),
    /** The worker will ask this page for peer bytes (transparent mode's `expect`). */
    expect: () => fetcher?.expect(),
    /** @type {(found: Record<string, unknown>, offered: Record<string, unknown>) => void} what the worker's lookup found, and the holders it invited (`invited`) */
    invited: (found, offered) => fetcher?.invited(found, offered),
    /** @type {(url: string, hash: string, peer: string) => void} bytes `peer` sent failed the worker's verification (`bad`) */
    mismatch: (url, hash, peer) => fetcher?.mismatch(url, hash, peer),
    /** @type {import('./loader.js').Via['peers']} */
    // Whatever fails unforeseen on the peer path, the load goes to the origin, and the error is counted, not swallowed.
    peers: fetcher && ((url, name, how) => /** @type {PeerFetch} */ (fetcher).get(url, name, how).catch((err) => {
      stats.error({ url, hash: name.hash, code: CLIENT_ERRORS.MGH_ERR_INTERNAL.code, message: String(err?.stack ?? err) })
      return null
    })),
    /** Resolves once the coordinator has acknowledged our latest holdings. */
    async synced () {
      while (!(announcer?.synced() ?? true)) await announcer?.settled()
    },
    /** The page goes away (what a browser does as it unloads one): last report, then leave the coordinator and every peer. */
    close () {
      usage?.send()
      signaling?.stop()
      pool?.drop()
    }
  }
}

/** where a page keeps the ICE servers its welcome named, for the next page's first offers (signaling.js) */
const ICE_KEY = 'maygh-ice'

/**
 * The ICE servers and policy an earlier page of this tab was told (none: its
 * first page, or storage off): the next page's first lookup and offers need
 * not wait for its own welcome.
 * @param {Storage | undefined} storage
 * @returns {RTCConfiguration | undefined}
 */
function recalled (storage) {
  try {
    const ice = JSON.parse(read(storage, ICE_KEY) || 'null')
    return Array.isArray(ice?.iceServers) ? ice : undefined
  } catch {}
}

/**
 * This browser's visitor key, kept in localStorage across visits: the
 * coordinator ties reports and quarantine to it when the site issues no
 * tokens. None when storage is off (then only this connection is remembered).
 * @param {Storage | undefined} localStorage
 * @returns {string | undefined}
 */
function visitorKey (localStorage) {
  try {
    let key = /** @type {Storage} */ (localStorage).getItem('maygh-visitor')
    if (!key) /** @type {Storage} */ (localStorage).setItem('maygh-visitor', (key = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('')))
    return key
  } catch {}
}
