/**
 * The load path of one URL, the same in the service worker (transparent
 * mode) and in the page (marked-element mode): its SHA-256 name (names.js) →
 * the asset store → peers, hedged with the origin (hedge.js). Several loads
 * of one content share one fetch. Origin bytes that match their name are
 * stored (and so announced); ones that do not (a stale manifest) are used
 * but neither stored nor shared. Unnamed URLs load from the origin,
 * unverified, and are never stored.
 */
import { CLIENT_ERRORS, MayghError, matches } from '../../protocol/index.js'
import { hedge } from './hedge.js'
import { originMs } from '../../policy/hedge-rule.js'

/**
 * Where one load's events go and where its peer bytes come from: the page's
 * Stats and PeerFetch, or, in the worker, the requesting page over messages.
 * @typedef {object} Via
 * @property {{ loaded: (e: Parameters<import('./stats.js').Stats['loaded']>[0]) => void, error: (e: { url?: string, hash?: string, code: string, message: string }) => void, failed: () => void }} stats
 * @property {((url: string, name: import('./names.js').Name, how: PeerHow) => Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string, peer: string } | null>) | null} peers
 * @property {(signal?: AbortSignal, headers?: Record<string, string>) => Promise<Response>} [origin] default: a
 *   plain GET of the URL (`headers`: more request headers, as a piece's `range`)
 * @property {() => import('../../policy/hedge-rule.js').Priority} [priority] how the page needs it (default: in the viewport);
 *   read at each hedge check, since the worker learns it from the page's `hello`
 * @property {(answer: Response) => void} [stream] given the origin's answer as it begins, once the
 *   origin is its only source (hedge.js `commit`: peers gave up), to be
 *   passed on as its bytes come (the worker's response to its page); the load still resolves with all of
 *   them once the last has come, and checks and stores them as ever
 * @property {(bytes: Uint8Array<ArrayBuffer>) => Promise<unknown>} [keep] where its verified bytes are kept
 *   (default: the store, as the asset the name names; a piece goes to its asset's: piece-stream.js)
 */
/**
 * `signal`: the origin won, stop; `onBytes`: on every peer frame; `deadline()`: the hedge deadline
 * (a holder that sends nothing for this long is passed over for the next one, if any); `priority()`:
 * how the page needs it (its requests go to peers most urgent first); `originMs()`: how long the origin
 * would take to send it whole, as observed (null: not seen yet); `race()`: ask the origin now (peers may
 * still win)
 * @typedef {{ signal: AbortSignal, onBytes: () => void, deadline: () => number, priority: () => import('../../policy/hedge-rule.js').Priority, originMs: () => number | null, race: () => void }} PeerHow
 */

export class Loader {
  /**
   * @param {object} o
   * @param {import('./names.js').Names} o.names
   * @param {import('./cache.js').Cache} o.cache
   * @param {Promise<unknown>} o.cacheReady
   * @param {import('./hedge.js').OriginClock} o.clock
   */
  constructor (o) {
    this.o = o
    /** @type {Set<Promise<unknown>>} */
    this.active = new Set()
    /** @type {Map<string, Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string }>>} by hash, until stored */
    this.byHash = new Map()
  }

  /** @template T @param {Promise<T>} p @returns {Promise<T>} */
  track (p) {
    this.active.add(p)
    p.catch(() => {}).finally(() => this.active.delete(p))
    return p
  }

  /** Resolves once no load is in flight. */
  async settled () {
    while (this.active.size) await Promise.allSettled([...this.active])
  }

  /**
   * Any URL, as a Blob (the page's API and marked elements).
   * @param {string} url
   * @param {Via} via
   * @returns {Promise<Blob>}
   */
  load (url, via) {
    return this.track((async () => {
      const t0 = performance.now()
      const href = new URL(url, location.href).href
      const name = globalThis.crypto?.subtle ? await this.o.names.get(href) : null
      if (name) {
        const { bytes, type } = await this.named(url, name, via)
        return new Blob([bytes], { type })
      }
      const res = await this.origin(href, via).catch((err) => { throw failure(via, url, null, err) })
      const bytes = new Uint8Array(await res.arrayBuffer())
      via.stats.loaded({ url, hash: null, source: 'origin', bytes: bytes.length, ms: performance.now() - t0 })
      return new Blob([bytes], { type: res.headers.get('content-type') ?? '' })
    })())
  }

  /**
   * A named asset's verified bytes (or the origin's, unverified, if they do not match: a stale name).
   * @param {string} url as the page asked for it (for events)
   * @param {import('./names.js').Name} name
   * @param {Via} via
   * @returns {Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string }>}
   */
  named (url, name, via) {
    // Several elements may name the same content: fetch it once. A load that comes while the
    // bytes are being stored shares them too (the store would not have them yet).
    let got = this.byHash.get(name.hash)
    if (!got) {
      const fetched = this.track(this.fetchNamed(url, name, via))
      this.byHash.set(name.hash, got = fetched)
      fetched.then(({ kept }) => kept, () => {}).finally(() => this.byHash.delete(name.hash))
    }
    return got.then(({ bytes, type }) => ({ bytes, type: name.type || type }))
  }

  /**
   * @param {string} url
   * @param {import('./names.js').Name} name
   * @param {Via} via
   * @returns {Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string, kept?: Promise<unknown> }>} `kept`: settles once they are stored
   */
  async fetchNamed (url, name, via) {
    const { cache, clock } = this.o
    const { hash } = name
    const t0 = performance.now()
    const done = (/** @type {'peer' | 'origin' | 'cache'} */ source, /** @type {number} */ bytes, /** @type {string} */ peer = '', /** @type {import('./hedge.js').Asked | undefined} */ asked = undefined) =>
      via.stats.loaded({ url, hash, source, bytes, ms: performance.now() - t0, ...(peer && { peer }), ...(asked && { asked }) })

    await this.o.cacheReady
    const cached = await cache.get(hash)
    if (cached) {
      done('cache', cached.bytes.length)
      return cached
    }

    const href = new URL(url, location.href).href
    /** @param {AbortSignal} signal @param {() => boolean} [commit] whether the origin is the only source now (hedge.js) */
    const fromOrigin = async (signal, commit = () => true) => {
      const res = await this.origin(href, via, signal)
      const type = name.type || res.headers.get('content-type') || ''
      let body = res
      if (via.stream && res.body && commit()) {
        const [passed, own] = res.body.tee()
        via.stream(new Response(passed, { headers: passedHeaders(res, type) }))
        body = new Response(own)
      }
      const t1 = performance.now()
      const bytes = new Uint8Array(await body.arrayBuffer())
      clock.observeBody(bytes.length, performance.now() - t1)
      return { bytes, type, peer: '' }
    }
    let won
    try {
      const priority = () => via.priority?.() ?? 'viewport'
      const size = name.size ?? 0
      // A request its page now places in view (it counted below the fold until the page said) gets the
      // viewport's deadline from then, not from its start, unless the one it had ends sooner (policy/hedge-rule.js).
      let was = priority()
      /** @type {(fromMs: number, toMs: number) => void} */
      let sooner = () => {}
      const deadline = () => {
        const now = priority()
        const ms = clock.deadline({ size, priority: now })
        if (was === 'later' && now === 'viewport') sooner(clock.deadline({ size, priority: was }), ms)
        was = now
        return ms
      }
      won = via.peers
        ? await hedge(({ signal, onBytes, sooner: inView, race }) => {
          sooner = inView
          return /** @type {NonNullable<Via['peers']>} */ (via.peers)(url, name, { signal, onBytes, deadline, priority, originMs: () => originMs(size, clock.speed), race })
        }, fromOrigin, deadline)
        : { value: await fromOrigin(new AbortController().signal), from: /** @type {const} */ ('origin') }
    } catch (err) {
      throw failure(via, url, hash, err)
    }
    const { bytes, type, peer } = won.value
    // The page gets its bytes now; storing them (and checking the origin's) goes on meanwhile.
    done(won.from, bytes.length, peer, won.asked)
    const kept = this.track((async () => {
      if (won.from === 'peer' || await matches(bytes, hash)) await (via.keep ? via.keep(bytes) : cache.put(hash, bytes, type, name.pieces))
      else via.stats.error({ url, hash, code: 'MGH_ERR_HASH_MISMATCH', message: 'origin bytes differ from the manifest; not cached' })
    })())
    return { bytes, type, kept }
  }

  /**
   * A GET to the origin, its time to first byte observed for the hedge deadline.
   * @param {string} href
   * @param {Via} via
   * @param {AbortSignal} [signal]
   */
  async origin (href, via, signal) {
    const t0 = performance.now()
    const res = await (via.origin ? via.origin(signal) : fetch(href, { signal }))
    if (!res.ok) throw new MayghError(CLIENT_ERRORS.MGH_ERR_ORIGIN, `${res.status} ${href}`)
    this.o.clock.observe(performance.now() - t0)
    return res
  }
}

/**
 * The headers of an origin answer passed on as it comes: its type, and its
 * length where the body is not decoded on the way (a `content-encoding`'s
 * length is of the encoded bytes).
 * @param {Response} res
 * @param {string} type
 */
function passedHeaders (res, type) {
  const length = res.headers.get('content-length')
  return { 'content-type': type, ...(length !== null && !res.headers.has('content-encoding') && { 'content-length': length }) }
}

/**
 * A load that failed everywhere: counted, said as an `error` event, and rethrown.
 * @param {Via} via
 * @param {string} url
 * @param {string | null} hash
 * @param {any} err
 */
function failure (via, url, hash, err) {
  via.stats.failed()
  via.stats.error({ url, ...(hash && { hash }), code: err?.code ?? 'MGH_ERR_ORIGIN', message: String(err?.message ?? err) })
  return err
}
