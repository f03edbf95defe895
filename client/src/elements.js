/**
 * Marked-element mode (`maygh-elements.js`, or `startElements()` of the
 * package's module entry), for sites that
 * cannot run a service worker: `<img data-maygh-src>` and
 * `<link data-maygh-href>` (dom.js) and `Maygh.load(url)` load through the
 * page itself, which keeps the asset store in IndexedDB.
 *
 *   <script src="/maygh-elements.js" data-coordinator="wss://…" defer></script>
 */
import { Names } from './names.js'
import { Cache } from './cache.js'
import { OriginClock } from './hedge.js'
import { Loader } from './loader.js'
import { bindDom } from './dom.js'
import { startPeers } from './peers.js'
import { navigationTtfb } from './page.js'

/**
 * Start marked-element mode (once per page: a second call returns the first's API).
 * @param {Readonly<typeof import('./config.js').DEFAULTS>} config
 * @returns {any} the `Maygh` API, also on `globalThis`
 */
export function startElements (config) {
  if ('Maygh' in globalThis) return /** @type {any} */ (globalThis).Maygh
  const names = new Names(config.manifest)
  /** @type {ReturnType<typeof startPeers> | null} */
  let peers = null
  const cache = new Cache({
    quotaBytes: config.quotaMb * 1048576,
    onChange: () => peers?.changed(),
    onCorrupt: () => { stats.counts.corrupt++ }
  })
  const cacheReady = cache.open()
  peers = startPeers(config, { holdings: () => cache.hashes(), read: (hash) => cache.get(hash), opened: cacheReady })
  const { stats, api } = peers
  const clock = new OriginClock(config)
  clock.observe(navigationTtfb())
  const loader = new Loader({ names, cache, cacheReady, clock })
  /** @type {import('./loader.js').Via} */
  const via = { stats, peers: peers.peers }

  const Maygh = {
    ...api,
    /**
     * @param {string} url
     * @param {import('../../policy/hedge-rule.js').Priority} [priority] how the page needs it (hedge-rule.js); default: in the viewport
     * @returns {Promise<Blob>}
     */
    load: (url, priority = 'viewport') => loader.load(url, { ...via, priority: () => priority }),
    stats: () => ({ ...api.stats(), stored: { bytes: cache.bytes, count: cache.meta.size } }),
    /** Resolves when no load is in flight and the coordinator has acknowledged our latest holdings. */
    async idle () {
      await api.ready
      await loader.settled()
      await peers?.synced()
    }
  }
  Object.defineProperty(globalThis, 'Maygh', { value: Object.freeze(Maygh), enumerable: true })
  bindDom(document, { load: Maygh.load, name: (url, hash) => names.set(url, hash) })
  return Maygh
}
