/**
 * The replay model of engine.js, written plainly (Maps, arrays, objects; no
 * typed arrays, slots, tags, slabs or queues) to be read, and to hold the fast
 * engine to account: sim/test/reference-model.test.js replays random traces
 * through both and requires every figure of their results to be equal. It
 * takes what `Engine#processBatch` takes (requests after the session window)
 * and keeps the same model: LRU stores under a quota, sessions online until
 * `linger` after their last request, the coordinator's index of online
 * holders, the shared peer-selection rule (sample, rank, mark the first
 * holder's entry for the asset: coordinator/src/policy/peer-selection.js),
 * connection failures, set-up time, upload token buckets, adoption. The
 * plug-in baseline: a second instance.
 *
 * Exact equality rests on three things both files must keep:
 * - Random draws (rng.js `replayRng(seed)`) in the same order: per lookup,
 *   the sample's start when the holder list is longer than `candidateSample`,
 *   then one per new connection tried when `failRate` > 0 (peer-lookup.js).
 *   Adoption is a hash of the client (`adopts`), not a draw.
 * - Holder lists in the same order, since the sample's start indexes them: a
 *   join lists the client's store in storage order, an `update` appends, a
 *   removal moves the last record into the hole, and records of ended
 *   sessions stay until a lookup's sample reads them (without counting
 *   them), then go, highest position first. Store entries likewise.
 * - Whole byte counts (as every parser gives), so every sum is exact.
 * The meters (metrics.js) and the figures derived from the tallies
 * (engine-result.js) are shared: this file restates the model's state.
 */
import { HolderRanking, rankKey, sampleNext, sampleStart } from '../../coordinator/src/policy/peer-selection.js'
import { FLAG_ASSET, FLAG_CONT } from './batch.js'
import { MAX_ENTRY_BYTES } from './client-stores.js'
import { engineResult } from './engine-result.js'
import { HourlySeries, PeakRate } from './metrics.js'
import { adopts, replayRng } from './rng.js'

const COUNTERS = ['requests', 'bytes', 'originRequests', 'originBytes', 'peerRequests', 'peerBytes', 'cacheRequests', 'cacheBytes',
  'assetRequests', 'assetBytes', 'oracleRequests', 'oracleBytes', 'attempts', 'failures', 'reused', 'setupRefusals', 'evictions', 'tooBig', 'lookupHits', 'joinHave', 'objectsSeen']

/**
 * One online session of a client, as the coordinator's peer record.
 * @typedef {object} Session
 * @property {number} client
 * @property {boolean} open false once it ended: its index records are then stale
 * @property {number} until online until then (Infinity while the session goes on)
 * @property {number} uploaded bytes served to peers in this session
 * @property {Set<Session>} channels sessions of peers it opened a data channel to
 */
/**
 * One entry of an asset's holder list in the coordinator's index.
 * @typedef {object} Holding
 * @property {Session} session the holder's session that listed the asset
 * @property {number} chosen the coordinator's clock when a lookup of this asset last marked it (0 never)
 */
/** @typedef {{ entries: Entry[], lru: Map<number, Entry>, bytes: number }} Store entries in storage order, and by recency (least recent first) @typedef {{ object: number, size: number }} Entry */

/** The engine's model, plainly. Feed it `request`s (or batches), then `finish`. */
export class ReferenceModel {
  /**
   * @param {Readonly<import('./config.js').SimConfig>} config
   * @param {{ adoption?: number, label?: string }} [options] as the Engine's
   */
  constructor (config, options = {}) {
    this.config = config
    this.label = options.label ?? 'maygh'
    this.adoption = options.adoption ?? config.adoption
    this.rng = replayRng(config.seed)
    /** @type {Record<string, number>} the totals engineResult reads, by name */
    this.n = { ...Object.fromEntries(COUNTERS.map((k) => [k, 0])), firstTs: NaN, lastTs: NaN }
    /** @type {Map<number, boolean>} every client seen: whether it adopts */
    this.adopter = new Map()
    /** @type {Map<number, Store>} */
    this.stores = new Map()
    /** @type {Map<number, Holding[]>} object → the index's entries, stale ones included */
    this.index = new Map()
    /** @type {Map<number, Session>} client → its session while online */
    this.online = new Map()
    /** @type {Map<number, { tokens: number, at: number }>} client → its upload token bucket */
    this.buckets = new Map()
    /** @type {Map<number, number>} client → bytes it served in sessions that ended */
    this.served = new Map()
    /** the coordinator's clock: one tick per lookup that marks a holder */
    this.clock = 0
    this.now = -Infinity
    this.meters = { lookups: new PeakRate(), updates: new PeakRate(), joins: new PeakRate(), hourly: new HourlySeries() }
    this.hour = -1
    this.hourEnd = -Infinity
  }

  /** @param {import('./batch.js').RequestBatch} b */
  processBatch (b) {
    for (let i = 0; i < b.n; i++) this.request(b.ts[i], b.client[i], b.object[i], b.bytes[i], b.flags[i])
  }

  /** @param {number} t @param {number} c client @param {number} o object @param {number} size @param {number} flags */
  request (t, c, o, size, flags) {
    const n = this.n
    this.now = t = Math.max(t, this.now)
    if (n.requests++ === 0) n.firstTs = t
    n.lastTs = t
    n.bytes += size
    n.objectsSeen = Math.max(n.objectsSeen, o + 1)
    for (const s of this.online.values()) if (s.until < t) this.leave(s)
    const hourly = this.meters.hourly
    if (t >= this.hourEnd) { // the first request of an hour, found as the engine finds it
      this.hour = hourly.hourOf(t)
      this.hourEnd = hourly.start + (this.hour + 1) * 3600
      this.notePeakOnline()
    }
    this.tally('requests', 1)
    this.tally('bytes', size)
    if (!this.adopter.has(c)) this.adopter.set(c, adopts(c, this.adoption, this.config.seed))
    const asset = (flags & FLAG_ASSET) !== 0
    if (asset) {
      n.assetRequests++
      n.assetBytes += size
    }
    if (this.adopter.get(c)) {
      const session = this.online.get(c) ?? this.join(c, t)
      session.until = flags & FLAG_CONT ? Infinity : t + this.config.linger
      if (asset) return this.serve(session, o, size)
    }
    this.count('origin', size)
  }

  /** @param {'origin' | 'peer' | 'cache' | 'oracle'} source a request served by it @param {number} size */
  count (source, size) {
    this.n[source + 'Requests']++
    this.n[source + 'Bytes'] += size
    this.tally(source + 'Bytes', size)
  }

  /** @param {string} series adds `amount` to this hour's figure in it @param {number} amount */
  tally (series, amount) { this.meters.hourly.series[series][this.hour] += amount }
  notePeakOnline () {
    const peak = this.meters.hourly.series.onlinePeak
    peak[this.hour] = Math.max(peak[this.hour], this.online.size)
  }

  /** A session starts: a new peer record (no channels) listing the store as new entries, never chosen. @param {number} c @param {number} t */
  join (c, t) {
    /** @type {Session} */
    const session = { client: c, open: true, until: t, uploaded: 0, channels: new Set() }
    this.online.set(c, session)
    const { entries } = this.storeOf(c)
    for (const { object } of entries) this.listOf(object).push({ session, chosen: 0 })
    this.n.joinHave += entries.length
    this.meters.joins.add(t)
    this.tally('joins', 1)
    this.notePeakOnline()
    return session
  }

  /** @param {Session} session ends: its records go stale, its upload joins its client's */
  leave (session) {
    session.open = false
    this.online.delete(session.client)
    this.served.set(session.client, (this.served.get(session.client) ?? 0) + session.uploaded)
  }

  /** An online adopter asks for an asset. @param {Session} session @param {number} o @param {number} size */
  serve (session, o, size) {
    const store = this.storeOf(session.client)
    const entry = store.lru.get(o)
    if (entry !== undefined) {
      store.lru.delete(o) // re-set: now the most recently used
      store.lru.set(o, entry)
      this.count('cache', size)
      this.count('oracle', size)
      return
    }
    this.meters.lookups.add(this.now)
    this.tally('lookups', 1)
    const from = this.lookup(session, o, size)
    if (from === null) {
      this.count('origin', size)
    } else {
      this.count('peer', size)
      from.uploaded += size
      if (this.config.uploadRate !== Infinity) this.bucket(from.client).tokens -= size
    }
    this.keep(session, o, size)
  }

  /**
   * A lookup by the shared rule: sample (stale records are read, not counted,
   * then dropped), rank (asking `accepts` only of holders the ranking wants),
   * mark the first one's entry for `o`; then the asker tries the ranked holders in order.
   * @param {Session} asker @param {number} o @param {number} size
   * @returns {Session | null} the holder that served
   */
  lookup (asker, o, size) {
    const list = this.listOf(o)
    const ranking = new HolderRanking(this.config.maxHolders, asker)
    const want = this.config.candidateSample
    const stale = []
    let online = 0
    for (let pos = sampleStart(list.length, want, this.rng), read = 1; pos !== -1; pos = sampleNext(pos, read++, online, list.length, want)) {
      const { session: holder, chosen } = list[pos]
      if (!holder.open) {
        stale.push(pos)
        continue
      }
      online++
      const connected = asker.channels.has(holder)
      const key = rankKey(connected, chosen)
      if (ranking.wants(holder, key) && this.accepts(holder, connected, size)) ranking.insert(holder, key)
    }
    for (const pos of stale.sort((a, b) => b - a)) removeAt(list, pos)
    if (online > 0) this.count('oracle', size)
    if (ranking.size === 0) return null
    this.n.lookupHits++
    const marked = /** @type {Holding} */ (list.find((entry) => entry.session === ranking.marked()))
    marked.chosen = ++this.clock
    for (const holder of ranking.ids.slice(0, ranking.size)) {
      if (asker.channels.has(holder)) {
        this.n.reused++
        return holder
      }
      this.n.attempts++
      if (this.config.failRate > 0 && this.rng.random() < this.config.failRate) {
        this.n.failures++
        continue
      }
      asker.channels.add(holder)
      return holder
    }
    return null
  }

  /**
   * Whether a holder can serve now: online through a connection set-up (if it needs one), under its upload cap.
   * @param {Session} holder @param {boolean} connected @param {number} size @returns {boolean}
   */
  accepts (holder, connected, size) {
    const { setupTime, uploadRate, uploadBurst } = this.config
    if (setupTime > 0 && !connected && holder.until < this.now + setupTime) {
      this.n.setupRefusals++
      return false
    }
    if (uploadRate === Infinity) return true
    const bucket = this.bucket(holder.client)
    bucket.tokens = Math.min(uploadBurst, bucket.tokens + (this.now - bucket.at) * uploadRate)
    bucket.at = this.now
    return bucket.tokens >= size
  }

  /**
   * Keeps a fetched object, evicting the least recently used to stay under the quota; lists it (an `update`).
   * @param {Session} session @param {number} o @param {number} size
   */
  keep (session, o, size) {
    if (size > this.config.quotaBytes || size > MAX_ENTRY_BYTES) {
      this.n.tooBig++
      return
    }
    const store = this.storeOf(session.client)
    while (store.bytes + size > this.config.quotaBytes) {
      const [object, victim] = /** @type {[number, Entry]} */ (store.lru.entries().next().value)
      const list = this.listOf(object)
      removeAt(list, list.findIndex((entry) => entry.session === session))
      store.lru.delete(object)
      removeAt(store.entries, store.entries.indexOf(victim))
      store.bytes -= victim.size
      this.n.evictions++
    }
    const entry = { object: o, size }
    store.entries.push(entry)
    store.lru.set(o, entry)
    store.bytes += size
    this.listOf(o).push({ session, chosen: 0 })
    this.meters.updates.add(this.now)
    this.tally('updates', 1)
  }

  /** @param {number} c @returns {Store} */
  storeOf (c) { return getOr(this.stores, c, () => ({ entries: [], lru: new Map(), bytes: 0 })) }

  /** @param {number} o @returns {Holding[]} the index's entries for `o` */
  listOf (o) { return getOr(this.index, o, () => []) }

  /** @param {number} c @returns {{ tokens: number, at: number }} the client's upload token bucket */
  bucket (c) { return getOr(this.buckets, c, () => ({ tokens: this.config.uploadBurst, at: 0 })) }

  /** @returns {import('./engine-result.js').EngineResult} what the engine reports for the same stream */
  finish () {
    for (const session of this.online.values()) this.leave(session) // sessions still open: their uploads count
    const clients = Math.max(0, ...[...this.adopter.keys()].map((c) => c + 1))
    const seen = Array.from({ length: clients }, (_, c) => this.adopter.has(c) ? (this.adopter.get(c) ? 1 : 2) : 0)
    const uploaded = Float64Array.from({ length: clients }, (_, c) => this.served.get(c) ?? 0)
    const entries = [...this.stores.values()].reduce((sum, store) => sum + store.entries.length, 0)
    const { label, adoption, meters } = this
    return engineResult(/** @type {any} */ ({ ...this.n, ...meters, label, adoption, seen, uploaded, entries }))
  }
}

/** Removes `list[pos]` by moving the last element there, as the engine's lists do. @template T @param {T[]} list @param {number} pos */
function removeAt (list, pos) {
  if (pos === -1) throw new Error('reference model: removing a record that is not listed')
  const last = /** @type {T} */ (list.pop())
  if (pos < list.length) list[pos] = last
}

/** @template K, V @param {Map<K, V>} map @param {K} key @param {() => V} make @returns {V} `map.get(key)`, made first if absent */
function getOr (map, key, make) {
  let value = map.get(key)
  if (value === undefined) map.set(key, (value = make()))
  return value
}
