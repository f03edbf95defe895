/**
 * Transparent mode (the default; `maygh.js`, or `start()` of the package's
 * module entry): the page keeps
 * its ordinary markup, and the service worker `maygh-sw.js` (worker.js)
 * answers the requests for the assets the manifest names. This script
 * registers the worker and holds what a worker cannot: the coordinator
 * connection and the WebRTC peers (peers.js). The worker asks it for peer
 * bytes; it asks the worker for bytes to serve.
 *
 *   <script src="/maygh.js" data-coordinator="wss://…" async></script>
 *
 * A visitor's first page view is not yet under the worker: it loads as
 * without maygh, and once the worker is active the page hands it the URLs it
 * loaded, which the worker reads back from the HTTP cache, stores and so
 * announces. Without service workers (an insecure page, an old browser), the
 * page is left exactly as without maygh and the console says why.
 */
import { DEFAULTS } from './config.js'
import { startPeers } from './peers.js'
import { navigationTtfb } from './page.js'
import { belowFold } from '../../policy/hedge-rule.js'
import { WorkerRoute } from './worker-route.js'

/**
 * What this page and its worker say to each other (worker-messages.js).
 * @typedef {import('./worker-messages.js').PageMessage} PageMessage
 * @typedef {import('./worker-messages.js').WorkerMessage} WorkerMessage
 */

/** Worker settings passed in its URL's query when not at their defaults. */
const WORKER_SETTINGS = /** @type {const} */ (['manifest', 'quotaMb', 'hedge', 'hedgeMinMs', 'hedgeMaxMs'])

/**
 * Start the page's side (once per page: a second call returns the first's API).
 * @param {Readonly<typeof DEFAULTS>} config
 * @returns {any} the `Maygh` API, also on `globalThis`
 */
export function startTransparent (config) {
  if ('Maygh' in globalThis) return /** @type {any} */ (globalThis).Maygh
  const sw = navigator.serviceWorker
  /** @type {string[]} what the worker holds, most recently used first */
  let held = []
  let storedBytes = 0
  /** @type {() => void} */
  let opened = () => {}
  const controller = sw?.controller
  // Registered (or checked for an update) once the page has loaded, so that on a first visit the
  // worker's script and manifest do not compete with the page's own requests.
  const registered = sw
    ? loadedPage().then(() => sw.register(workerUrl(config), config.workerScope ? { scope: config.workerScope } : undefined))
    : Promise.reject(new Error('no service workers here (an insecure page, or the browser lacks them)'))
  /**
   * The worker to ask: the one in control now (a new version takes over open pages: the one that
   * controlled the page at its start is gone then, and what is posted to it is lost), else the
   * registration's active one.
   */
  const worker = () => sw?.controller ? Promise.resolve(sw.controller) : registered.then((r) => sw.controller ?? r.active ?? sw.ready.then((r) => r.active))
  /**
   * @param {PageMessage} msg `read`, `adopt` or `idle`
   * @returns {Promise<any>} the worker's answer on the port sent along
   */
  const ask = (msg) => worker().then((w) => new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel()
    port1.onmessage = (e) => {
      port1.close()
      resolve(e.data)
    }
    /** @type {ServiceWorker} */ (w).postMessage(msg, [port2])
  }))

  /** @param {PageMessage} msg one the worker answers nothing */
  const post = (msg) => worker().then((w) => w?.postMessage(msg))
  // Only a page the worker controls has one: its requests are the worker's, and it is there now.
  const relay = controller ? new WorkerRoute((msg) => controller === sw.controller ? controller.postMessage(msg) : post(msg)) : undefined
  const peers = startPeers(config, {
    holdings: () => held,
    read: (hash) => ask({ maygh: 'read', hash }),
    opened: new Promise((resolve) => { opened = () => resolve(undefined) }),
    relay,
    // The worker verifies what peers sent before it keeps or shows any of it: off this page's main thread.
    verifiedLater: true,
    // Opted out: the worker closes its socket too, and opens none until a page joins again.
    off: () => {
      relay?.via({ maygh: 'via', id: null })
      post({ maygh: 'peers', up: false })
    }
  })
  const { stats, api } = peers
  registered.catch((err) => {
    console.info(`maygh: peers are off: ${err.message}`)
    opened()
  })

  /** @param {import('./worker-messages.js').Held} m what the worker's store holds now, or what changed */
  const holding = (m) => {
    held = m.all ?? [...m.add ?? [], ...held.filter((h) => !m.remove?.includes(h) && !m.add?.includes(h))]
    storedBytes = m.bytes
    opened()
    peers.changed()
  }

  sw?.addEventListener('message', (e) => {
    const m = /** @type {WorkerMessage | undefined} */ (e.data)
    switch (m?.maygh) {
      case 'get': return answer(e.ports[0], m)
      case 'ping': return hello()
      case 'expect': return peers.expect()
      case 'invited': return peers.invited(m.found, m.offered)
      case 'bad': return peers.mismatch(m.url, m.hash, m.peer)
      case 'held': return holding(m)
      case 'via': return relay?.via(m)
      case 'frame': return relay?.frame(m.msg)
      case 'loaded': return stats.loaded(m.e)
      case 'error': return stats.error(m.e)
      case 'failed': return stats.failed()
    }
  })
  // Messages the worker sent before this script ran (requests made while the page was parsed) come now.
  sw?.startMessages()

  /**
   * The worker wants an asset from peers: verified bytes, or null.
   * @param {MessagePort} port
   * @param {import('./worker-messages.js').Get} m
   */
  const answer = async (port, { id, url, name, quietMs, priority, originMs }) => {
    const stop = new AbortController()
    port.onmessage = () => stop.abort()
    // Once the page has placed its images, where this one lies decides (the worker may have asked
    // before that, or before it heard).
    const now = () => priority === 'blocking' || !placing ? priority ?? 'viewport' : belowFold(placement, url) ? 'later' : 'viewport'
    const race = () => port.postMessage(/** @satisfies {import('./worker-messages.js').GetReply} */ ({ t: 'race' }), [])
    const asset = peers.peers && await peers.peers(url, name, { signal: stop.signal, onBytes: () => flows(id), deadline: () => quietMs, priority: now, originMs: () => originMs ?? null, race }).catch(() => null)
    port.postMessage(/** @satisfies {import('./worker-messages.js').GetReply} */ ({ t: 'done', asset }), asset ? [asset.bytes.buffer] : [])
  }

  /** @type {Set<number>} the `get`s whose peer bytes flowed since the worker was last told */
  const flowed = new Set()
  let toldAt = -Infinity
  /** @type {ReturnType<typeof setTimeout> | 0} */
  let telling = 0
  /**
   * Peer bytes flow for a `get`: the worker is told at the next turn, then at most once per 20 ms for
   * all of the page's `get`s together while they keep coming (its hedge needs no finer news, and must
   * not miss a transfer that flows in frames closer than that; one message per request took 30–75 ms
   * of a page's main thread over the shop's 40 images).
   * @param {number} id
   */
  const flows = (id) => {
    flowed.add(id)
    telling ||= setTimeout(() => {
      telling = 0
      toldAt = performance.now()
      post({ maygh: 'moving', ids: [...flowed] })
      flowed.clear()
    }, toldAt + 20 - performance.now())
  }

  /** @type {Promise<unknown>} */
  let adopted = Promise.resolve()
  // `placing`: this page will say where its images lie (`later`), once laid out.
  const placing = !!controller && typeof IntersectionObserver === 'function'
  const hello = () => post({ maygh: 'hello', ttfb: navigationTtfb(), placing })
  /** @type {import('../../policy/hedge-rule.js').Placement} where the page's images lie, as far as laid out: none yet */
  let placement = { below: new Set(), above: new Set(), placing }
  // The worker lets peers take longer over them (policy/hedge-rule.js). Told once the page has been laid
  // out, as it is anyway: measuring them as the script starts forced a layout of the half-parsed
  // page (60 ms of the shop's main thread, which held up the worker's messages and the coordinator's).
  if (placing) {
    watchPlacement((now) => {
      placement = now
      post({ maygh: 'later', urls: [...now.below], above: [...now.above], placing: now.placing })
    })
  }
  // Whether peers answered (joined) or not (coordinator unreachable, refused, opted out): the worker
  // sends the next page's first requests straight to the origin while its script loads when they did not.
  // With the coordinators to ask about the next page's requests before its script joins (not in the
  // worker's URL: a page whose settings differ would replace the worker under the pages it controls).
  // And who it joined as, for the worker's own socket to join as the same visitor.
  peers.ready.then((up) => post({ maygh: 'peers', up, coordinator: config.coordinator, lookupTimeoutMs: config.lookupTimeoutMs, ...peers.joinAs() })).catch(() => {})
  // A controlled page says hello at once: the worker holds its requests for peers' bytes until then.
  if (controller) hello()
  registered.then(() => {
    if (controller) return
    hello()
    // The first view, uncontrolled: the worker stores what the page loaded (it has loaded by now).
    adopted = ask({ maygh: 'adopt', urls: performance.getEntriesByType('resource').map((e) => e.name).filter((u) => u.startsWith(location.origin + '/')) })
  }, () => {})

  const Maygh = {
    ...api,
    /** @param {string} url @returns {Promise<Blob>} through the worker, like any request of the page */
    load: async (url) => {
      const res = await fetch(url)
      if (!res.ok) throw new Error(`${res.status} ${url}`)
      return res.blob()
    },
    stats: () => ({ ...api.stats(), stored: { bytes: storedBytes, count: held.length } }),
    /** Resolves once the page has loaded, the worker has nothing in flight, and the coordinator has acknowledged our latest holdings. */
    async idle () {
      await api.ready
      await loadedPage()
      await adopted
      // Its holdings as the worker's reply says (its 'held' news may still be on the way), announced.
      const now = await registered.then(() => ask({ maygh: 'idle' }), () => null)
      if (now?.maygh === 'held') holding(now)
      await peers.synced()
    }
  }
  Object.defineProperty(globalThis, 'Maygh', { value: Object.freeze(Maygh), enumerable: true })
  return Maygh
}

/** @param {Readonly<typeof DEFAULTS>} config */
function workerUrl (config) {
  const url = new URL(config.worker, location.href)
  for (const k of WORKER_SETTINGS) if (config[k] !== DEFAULTS[k]) url.searchParams.set(k, String(config[k]))
  return url.href
}

/**
 * Watch the page's images (those parsed by now and by the end of parsing)
 * with an IntersectionObserver, which reads the layout the browser makes
 * anyway, and say where they lie whenever it reports: which are below the
 * viewport, which in it, and whether some are not placed yet (the page is
 * still being parsed, or the observer has yet to report on them).
 * @param {(placement: import('../../policy/hedge-rule.js').Placement) => void} changed
 */
function watchPlacement (changed) {
  /** @type {Map<Element, string>} */
  const below = new Map()
  /** @type {Map<Element, string>} */
  const above = new Map()
  /** @type {Set<Element>} observed, not yet reported on */
  const unplaced = new Set()
  // Parsed to the end once DOMContentLoaded has fired (readyState is `interactive` a little before).
  let parsed = document.readyState !== 'loading'
  const tell = () => changed({ below: new Set(below.values()), above: new Set(above.values()), placing: !parsed || unplaced.size > 0 })
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const img = /** @type {HTMLImageElement} */ (e.target)
      const url = img.currentSrc || img.src
      unplaced.delete(img)
      below.delete(img)
      above.delete(img)
      if (!e.isIntersecting && e.boundingClientRect.top >= (e.rootBounds?.bottom ?? innerHeight)) below.set(img, url)
      else above.set(img, url)
    }
    tell()
  })
  /** @type {WeakSet<Element>} */
  const seen = new WeakSet()
  const observe = () => {
    for (const img of document.images) {
      if (seen.has(img)) continue
      seen.add(img)
      unplaced.add(img)
      observer.observe(img)
    }
  }
  // Parsed to the end: what is seen then is all there is to place (images added later count as in
  // view). Said at once when there is nothing to place (the observer would never report).
  const parsedNow = () => {
    parsed = true
    observe()
    if (!unplaced.size) tell()
  }
  if (parsed) parsedNow()
  else {
    observe()
    addEventListener('DOMContentLoaded', parsedNow, { once: true })
  }
}

/** Resolves once the page's `load` event has fired. */
const loadedPage = () => new Promise((resolve) => document.readyState === 'complete' ? resolve(undefined) : addEventListener('load', resolve, { once: true }))
