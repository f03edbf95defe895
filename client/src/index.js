/**
 * Entry point of the bundle (`maygh.js`): reads the script tag's data
 * attributes, wires the parts together and exposes `window.Maygh`.
 *
 *   <script src="/maygh.js" data-coordinator="wss://…" data-manifest="/maygh-manifest.json" defer></script>
 */
import { coordinatorUrls, readConfig } from './config.js'
import { Stats } from './stats.js'
import { Names } from './names.js'
import { Cache } from './cache.js'
import { Signaling } from './signaling.js'
import { Announcer } from './announcer.js'
import { PeerPool } from './peer-pool.js'
import { Loader } from './loader.js'
import { bindDom } from './dom.js'
import { Uplink } from './uplink.js'

/** Wire everything up once per page (a second copy of the script does nothing). */
function start () {
  const script = /** @type {HTMLScriptElement | null} */ (document.currentScript ?? document.querySelector('script[data-coordinator]'))
  const config = readConfig({ ...script?.dataset }, console.warn)
  const stats = new Stats()
  const names = new Names(config.manifest)
  // Peers need WebRTC and a coordinator; verification (and so caching and sharing) needs WebCrypto, i.e. a secure context.
  const urls = coordinatorUrls(config.coordinator)
  const peers = Boolean(urls.length && globalThis.RTCPeerConnection && globalThis.WebSocket && globalThis.crypto?.subtle)
  // Whether this visitor shares: the site's mode, the visitor's choice, Save-Data, its upload budget.
  const uplink = new Uplink(config)
  /** what this visitor lists as held: nothing while it does not serve */
  const listed = () => uplink.serving() ? cache.hashes() : []

  /** @type {Announcer | null} */
  let announcer = null
  const cache = new Cache({
    quotaBytes: config.quotaMb * 1048576,
    onChange: () => announcer?.schedule(),
    onCorrupt: () => { stats.counts.corrupt++ }
  })
  const cacheReady = cache.open()

  const signaling = peers ? new Signaling({ urls, token: config.token, visitor: visitorKey(), backoffBaseMs: config.backoffBaseMs, backoffMaxMs: config.backoffMaxMs, getHave: listed }) : null
  /** Resolves true once joined, false if the first join took longer than `joinTimeoutMs` (or there is no coordinator). */
  const ready = new Promise((resolve) => {
    if (!signaling) return resolve(false)
    signaling.on('welcome', () => resolve(true))
    signaling.on('refused', () => resolve(false))
    cacheReady.then(() => {
      if (uplink.mode === 'off') return resolve(false)
      signaling.resume()
      setTimeout(() => resolve(false), config.joinTimeoutMs)
    })
  })

  let pool = null
  if (signaling) {
    const a = announcer = new Announcer({ signaling, holdings: listed, serving: () => uplink.serving(), delayMs: config.announceDelayMs })
    signaling.on('welcome', (/** @type {{ have: string[], url: string }} */ w) => {
      a.welcomed(w.have)
      stats.joined(w.url)
    })
    signaling.on('warning', (/** @type {{ code: string, message: string }} */ m) => stats.error({ code: m.code, message: m.message }))
    const p = pool = new PeerPool({
      signaling,
      config,
      serving: () => uplink.serving(),
      // Checked per request: a peer still asking after we stopped serving gets `miss`.
      serve: async (hash) => uplink.serving() ? cache.get(hash) : null,
      onServed: (peer, hash, bytes) => {
        stats.served({ peer, hash, bytes })
        uplink.spend(bytes)
      }
    })
    // Off: leave the coordinator (which lists nothing of ours from then on) and every peer.
    // Otherwise withdraw or announce at once, joining first if we had left.
    uplink.on('change', (/** @type {string} */ mode) => {
      if (mode === 'off') {
        signaling.stop()
        p.drop()
      } else {
        cacheReady.then(() => signaling.resume())
        a.flush()
      }
    })
  }

  const loader = new Loader({ names, cache, stats, signaling, pool, ready, cacheReady, config })

  const Maygh = {
    version: 1,
    config,
    ready,
    /** @param {string} url @returns {Promise<Blob>} */
    load: (url) => loader.load(url),
    /** Stop sharing with other visitors, now and on later visits (no peers at all). */
    optOut () { uplink.choose('out') },
    /** Share with other visitors again (the site's budget and Save-Data still apply), now and on later visits. */
    optIn () { uplink.choose('in') },
    /** @param {string} type @param {Function} fn */
    on (type, fn) { stats.on(type, fn); return Maygh },
    /** @param {string} type @param {Function} fn */
    off (type, fn) { stats.off(type, fn); return Maygh },
    stats: () => ({
      ...stats.snapshot(),
      peerId: signaling?.id ?? null,
      joined: signaling?.joined ?? false,
      held: announcer?.held ?? 0,
      stored: { bytes: cache.bytes, count: cache.meta.size },
      connected: pool?.connected().length ?? 0,
      uplink: { ...uplink.state(), sent: uplink.sent() }
    }),
    /** Resolves when no load is in flight and the coordinator has acknowledged our latest holdings. */
    async idle () {
      await ready
      while (loader.active.size || !(announcer?.synced() ?? true)) {
        await loader.settled()
        await announcer?.settled()
      }
    }
  }
  Object.defineProperty(globalThis, 'Maygh', { value: Object.freeze(Maygh), enumerable: true })

  bindDom(document, { load: Maygh.load, name: (url, hash) => names.set(url, hash) })
}

/**
 * This browser's visitor key, kept in localStorage across visits: the
 * coordinator ties reports and quarantine to it when the site issues no
 * tokens. None when storage is off (then only this connection is remembered).
 * @returns {string | undefined}
 */
function visitorKey () {
  try {
    let key = localStorage.getItem('maygh-visitor')
    if (!key) localStorage.setItem('maygh-visitor', (key = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('')))
    return key
  } catch {}
}

if (!('Maygh' in globalThis)) start()
