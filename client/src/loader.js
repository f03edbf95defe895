/**
 * The load path of one URL: IndexedDB → a peer holding it (lookup → connect →
 * request → verify) → the origin. Each load starts at the next of the holders
 * it is handed, so a page spreads over all of them. Peer bytes are used only
 * after their SHA-256 matches; a mismatch counts as a rejection. A peer that
 * sends bad bytes, does not open a channel within a fifth of connectTimeoutMs
 * or stalls is reported to the coordinator, dropped and not asked again this
 * session; one that says `miss` is reported and moved past. Origin bytes that
 * match are stored and announced; ones that do not (stale manifest) are used
 * but neither stored nor shared.
 */
import { CLIENT_ERRORS, MayghError, matches } from '../../protocol/index.js'

export class Loader {
  /**
   * @param {object} o
   * @param {import('./names.js').Names} o.names
   * @param {import('./cache.js').Cache} o.cache
   * @param {import('./stats.js').Stats} o.stats
   * @param {import('./signaling.js').Signaling | null} o.signaling
   * @param {import('./peer-pool.js').PeerPool | null} o.pool
   * @param {Promise<unknown>} o.ready resolves when joined or given up
   * @param {Promise<unknown>} o.cacheReady
   * @param {{ lookupTimeoutMs: number, connectTimeoutMs: number, quotaMb: number }} o.config
   */
  constructor (o) {
    this.o = o
    /** @type {Set<Promise<unknown>>} */
    this.active = new Set()
    /** @type {Map<string, Promise<{ bytes: Uint8Array<ArrayBuffer>, type: string }>>} by hash */
    this.byHash = new Map()
    /** @type {Set<string>} peers not asked again this session: they sent bad bytes, never opened a channel or stalled */
    this.banned = new Set()
    /** @type {Set<string>} peers reported to the coordinator */
    this.reported = new Set()
    /** loads that asked peers so far: where in its holder list the next one starts */
    this.turn = 0
  }

  /**
   * @param {string} url
   * @returns {Promise<Blob>}
   */
  load (url) {
    const p = this.run(String(url))
    this.active.add(p)
    p.catch(() => {}).finally(() => this.active.delete(p))
    return p
  }

  /** Resolves once no load is in flight. */
  async settled () {
    while (this.active.size) await Promise.allSettled([...this.active])
  }

  /** @param {string} url */
  async run (url) {
    const { names, stats } = this.o
    const t0 = performance.now()
    const href = new URL(url, location.href).href
    await names.ready
    const name = globalThis.crypto?.subtle ? names.get(href) : null
    try {
      if (!name) {
        const res = await originFetch(href)
        const bytes = new Uint8Array(await res.arrayBuffer())
        stats.loaded({ url, hash: null, source: 'origin', bytes: bytes.length, ms: performance.now() - t0 })
        return new Blob([bytes], { type: res.headers.get('content-type') ?? '' })
      }
      // Several elements may name the same content: fetch it once.
      let got = this.byHash.get(name.hash)
      if (!got) {
        got = this.fetchNamed(url, href, name, t0)
        this.byHash.set(name.hash, got)
        got.finally(() => this.byHash.delete(name.hash)).catch(() => {})
      }
      const { bytes, type } = await got
      return new Blob([bytes], { type: name.type || type })
    } catch (err) {
      stats.counts.failed++
      stats.error({ url, hash: name?.hash, code: err.code ?? 'MGH_ERR_ORIGIN', message: String(err.message ?? err) })
      throw err
    }
  }

  /**
   * @param {string} url as the caller gave it (for events)
   * @param {string} href absolute
   * @param {import('./names.js').Name} name
   * @param {number} t0
   */
  async fetchNamed (url, href, name, t0) {
    const { cache, stats } = this.o
    const { hash } = name
    const done = (/** @type {'peer' | 'origin' | 'cache'} */ source, /** @type {number} */ bytes, /** @type {string} */ peer = '') =>
      stats.loaded({ url, hash, source, bytes, ms: performance.now() - t0, ...(peer && { peer }) })

    await this.o.cacheReady
    const cached = await cache.get(hash)
    if (cached) {
      done('cache', cached.bytes.length)
      return cached
    }

    const holders = await this.holders(hash)
    // Loads start at different holders, so a page spreads over every holder it is handed
    // (and meets a bad one early, with the others to fall back on).
    const turn = this.turn++ % (holders.length || 1)
    for (const peer of [...holders.slice(turn), ...holders.slice(0, turn)]) {
      // Loads started together share their holders: one may have failed another load meanwhile.
      if (this.banned.has(peer)) continue
      let asset
      try {
        const attempt = /** @type {import('./peer-pool.js').PeerPool} */ (this.o.pool).transfer(peer)
        // Reported whenever it fails, even after this load has moved on.
        attempt.catch((err) => this.report(peer, hash, FAULTS[err.code]))
        // A channel not open within a fifth of connectTimeoutMs counts as not opened: reported,
        // dropped, and the next holder tried (the page does not wait out the timeout).
        const transfer = await Promise.race([attempt, new Promise((resolve) => setTimeout(resolve, this.o.config.connectTimeoutMs / 5))])
        if (!transfer) throw new MayghError(CLIENT_ERRORS.MGH_ERR_CONNECT_TIMEOUT, 'passed over')
        asset = await transfer.request(hash, name.size ?? this.o.config.quotaMb << 20)
      } catch (err) {
        stats.error({ url, hash, code: err.code, message: String(err.message) })
        this.report(peer, hash, FAULTS[err.code])
        continue
      }
      if (!(await matches(asset.bytes, hash))) {
        stats.rejected({ url, hash, peer })
        this.report(peer, hash, 'hash_mismatch')
        continue
      }
      await cache.put(hash, asset.bytes, name.type || asset.type)
      done('peer', asset.bytes.length, peer)
      return asset
    }

    const res = await originFetch(href)
    const bytes = new Uint8Array(await res.arrayBuffer())
    const type = name.type || res.headers.get('content-type') || ''
    if (await matches(bytes, hash)) await cache.put(hash, bytes, type)
    else stats.error({ url, hash, code: 'MGH_ERR_HASH_MISMATCH', message: 'origin bytes differ from the manifest; not cached' })
    done('origin', bytes.length)
    return { bytes, type }
  }

  /**
   * Tell the coordinator a peer failed us (it counts reports of enough
   * visitors into a quarantine), and ask that peer nothing more this session,
   * unless it only lacked this one asset.
   * @param {string} peer
   * @param {string} hash
   * @param {string | undefined} reason a REPORT_REASONS value; none: not the peer's fault (e.g. our coordinator went)
   */
  report (peer, hash, reason) {
    if (!reason) return
    if (reason !== 'miss' && !this.banned.has(peer)) {
      this.banned.add(peer)
      this.o.pool?.drop(peer)
    }
    // Once per peer and page: the coordinator counts one per visitor anyway.
    if (this.reported.has(peer)) return
    this.reported.add(peer)
    this.o.signaling?.send({ type: 'report', peer, hash, reason })
  }

  /**
   * Peers the coordinator names as holders; none (so the origin) when not
   * joined, on timeout or on any error, such as MGH_ERR_RATE_LIMITED. A lookup
   * is safe to repeat: one cut off by a lost coordinator is asked again of the
   * next one joined, within the same timeout.
   * @param {string} hash
   * @returns {Promise<string[]>}
   */
  async holders (hash) {
    const { signaling, pool } = this.o
    if (!signaling || !pool) return []
    await this.o.ready
    try {
      const reply = await signaling.request({ type: 'lookup', hash, connected: pool.connected().slice(0, 64) }, this.o.config.lookupTimeoutMs, { retry: true })
      return (Array.isArray(reply.peers) ? reply.peers : []).filter((/** @type {unknown} */ p) => typeof p === 'string' && p !== signaling.id && !this.banned.has(p))
    } catch {
      return []
    }
  }
}

/** The peer's failures a receiver reports, by the error they ended its attempt with. */
const FAULTS = /** @type {Record<string, string>} */ ({
  MGH_ERR_MISS: 'miss',
  MGH_ERR_STALL: 'stall',
  MGH_ERR_CONNECT_TIMEOUT: 'no_channel',
  MGH_ERR_CONNECT_FAILED: 'no_channel',
  MGH_ERR_PEER_PROTOCOL: 'hash_mismatch'
})

/** @param {string} href */
async function originFetch (href) {
  const res = await fetch(href)
  if (!res.ok) throw new MayghError(CLIENT_ERRORS.MGH_ERR_ORIGIN, `${res.status} ${href}`)
  return res
}
