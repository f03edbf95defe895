/**
 * The replay model of engine.js, written plainly (Maps, arrays, objects; no
 * typed arrays, slots, tags, slabs or queues) to be read, and to hold the fast
 * engine to account: sim/test/reference-model.test.js replays random traces
 * through both and requires every figure of their results to be equal. It
 * takes what `Engine#processBatch` takes (requests after the session window)
 * and keeps the same model: LRU stores under a quota, sessions online until
 * `linger` after their last request, page views (page-views.js), each a new
 * peer record with page-lifetime channels, the coordinator's index of online
 * holders that serve, the shared peer-selection rule (sample, rank, mark the
 * first holder's entry for the asset: policy/peer-selection.js),
 * the client's tries (open channels, set-ups under way, connections that
 * fail at an untraversable end or at random, reported), the race with the
 * origin (client-timing.js), first page views and media from the origin,
 * receive-only clients, upload budgets and token buckets, quarantine by the
 * coordinator's report rule, adoption. The plug-in baseline: a second instance.
 *
 * Exact equality rests on four things both files must keep:
 * - Random draws (rng.js `replayRng(seed)`) in the same order: per lookup,
 *   the sample's start when the holder list is longer than `candidateSample`,
 *   then one per new connection tried when `failRate` > 0, unless it failed
 *   without one (an untraversable end; with the hedge, a set-up longer than
 *   the client waits) (peer-lookup.js). Adoption and traits are hashes of the
 *   client (`adopts`, `hasTrait`), not draws.
 * - Holder lists in the same order, since the sample's start indexes them: a
 *   join (or listing again) lists the client's store in storage order, an
 *   `update` appends, a removal moves the last record into the hole, and
 *   records of ended sessions or withdrawn listings stay until a lookup's
 *   sample reads them (without counting them), then go, highest position
 *   first. Store entries likewise. A page view's new peer record keeps its
 *   entries in their places, never chosen (the engine reads their times as
 *   never chosen when they predate the record; here they are set to 0).
 * - Whole byte counts (as every parser gives), so every sum is exact; and the
 *   race's times computed by the same expressions in the same order.
 * - The page's tries in the same order: the ranked holders, less those that
 *   failed the page, from the page's turn. A page view reports a peer record
 *   at most once (with session-long channels it may try it again).
 * The meters (metrics.js `ReplayMeters`) and the figures derived from the
 * tallies (engine-result.js) are shared: the model restates the engine's
 * state and logic, in this file (requests, sessions, page views, stores),
 * reference-lookup.js (the lookup and the client's tries) and
 * reference-serving.js (listing, upload, reports, quarantine), over the
 * shapes of reference-state.js.
 */
import { FLAG_ASSET, FLAG_CONT, FLAG_MEDIA } from '../batch.js'
import { replayPriority } from '../client-timing.js'
import { MAX_ENTRY_BYTES } from '../engine/client-stores.js'
import { TALLY_COUNTERS, engineResult } from '../engine/engine-result.js'
import { ReplayMeters } from '../engine/metrics.js'
import { startsPageView } from '../page-views.js'
import { lookup } from './reference-lookup.js'
import { list, servedBy, serves, unlist } from './reference-serving.js'
import { getOr, removeAt, touch } from './reference-state.js'
import { adopts, hasTrait, replayRng } from '../rng.js'

/** @typedef {import('./reference-state.js').Session} Session */
/** @typedef {import('./reference-state.js').Holding} Holding */
/** @typedef {import('./reference-state.js').Store} Store */
/** @typedef {import('./reference-state.js').Entry} Entry */
/** @typedef {import('./reference-state.js').Traits} Traits */

/** The engine's model, plainly. Feed it `request`s (or batches), then `finish`. */
export class ReferenceModel {
  /**
   * @param {Readonly<import('../config.js').SimConfig>} config
   * @param {{ adoption?: number, label?: string }} [options] as the Engine's
   */
  constructor (config, options = {}) {
    this.config = config
    this.label = options.label ?? 'maygh'
    this.adoption = options.adoption ?? config.adoption
    this.rng = replayRng(config.seed)
    /** @type {Record<string, number>} the totals engineResult reads, by name */
    this.n = { ...Object.fromEntries(TALLY_COUNTERS.map((k) => [k, 0])), firstTs: NaN, lastTs: NaN }
    /** @type {Map<number, boolean>} every client seen: whether it adopts */
    this.adopter = new Map()
    /** @type {Map<number, Traits>} adopters' traits */
    this.traits = new Map()
    /** @type {Map<number, number>} client → new connections it tried in a row that failed (none: 0) */
    this.failedInRow = new Map()
    /** @type {Map<number, number>} client → page views so far */
    this.views = new Map()
    /** @type {Map<number, Store>} */
    this.stores = new Map()
    /** @type {Map<number, Holding[]>} object → the index's entries, stale ones included */
    this.index = new Map()
    /** @type {Map<number, Session>} client → its session while online */
    this.online = new Map()
    /** @type {Map<number, { tokens: number, at: number }>} client → its upload token bucket */
    this.buckets = new Map()
    /** @type {Map<number, { day: number, bytes: number }>} client → bytes it served on the UTC day of its latest upload */
    this.today = new Map()
    /** @type {Map<number, number>} client → bytes it served in sessions that ended */
    this.served = new Map()
    /** @type {Map<number, Map<number, number>>} reported client → reporter → when it last reported (reports that count) */
    this.reports = new Map()
    /** @type {Map<number, number>} client → when its latest quarantine ends */
    this.quarantinedUntil = new Map()
    /** the coordinator's clock: one tick per lookup that marks a holder */
    this.clock = 0
    this.now = -Infinity
    this.meters = new ReplayMeters()
  }

  /** @param {import('../batch.js').RequestBatch} b */
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
    if (t >= this.meters.hourEnd) this.meters.startHour(t, this.online.size)
    this.tally('requests', 1)
    this.tally('bytes', size)
    if (!this.adopter.has(c)) {
      const { adoption, config: { seed, untraversable, receiveOnly } } = this
      this.adopter.set(c, adopts(c, adoption, seed))
      if (this.adopter.get(c)) this.traits.set(c, { untraversable: hasTrait(c, 'untraversable', untraversable, seed), receiveOnly: hasTrait(c, 'receiveOnly', receiveOnly, seed) })
    }
    const asset = (flags & FLAG_ASSET) !== 0
    if (asset) {
      n.assetRequests++
      n.assetBytes += size
    }
    if (this.adopter.get(c)) {
      const joined = !this.online.has(c)
      const session = this.online.get(c) ?? this.join(c, t)
      session.until = flags & FLAG_CONT ? Infinity : t + this.config.linger
      if (startsPageView(flags, t - session.lastAt)) this.startPage(session, joined)
      session.lastAt = t
      if (asset) return this.serve(session, o, size, flags)
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
  tally (series, amount) { this.meters.series[series][this.meters.hour] += amount }

  /** A session starts: a new peer record (no channels) listing the store as new entries, never chosen, if it serves. @param {number} c @param {number} t */
  join (c, t) {
    /** @type {Session} */
    const session = { client: c, open: true, until: t, uploaded: 0, lastAt: -Infinity, page: { since: this.clock }, turn: 0, assets: 0, channels: new Map(), reported: new Set(), listing: null }
    this.online.set(c, session)
    if (serves(this, session)) list(this, session)
    this.countJoin(session)
    this.meters.noteOnline(this.online.size)
    return session
  }

  /**
   * A page view begins, having reported nobody; with page-lifetime channels, one after the session's
   * first is a new page script: a new peer record (holdings never chosen, no channels) and a new join.
   * @param {Session} session @param {boolean} joined whether the session's join was this page's
   */
  startPage (session, joined) {
    this.n.pageViews++
    this.views.set(session.client, (this.views.get(session.client) ?? 0) + 1)
    session.reported = new Set()
    session.assets = 0
    if (joined || this.config.channels !== 'page') return
    session.page = { since: this.clock }
    session.channels = new Map()
    session.turn = 0
    const listing = session.listing
    if (listing !== null) {
      for (const { object } of this.storeOf(session.client).entries) {
        /** @type {Holding} */ (this.listOf(object).find((entry) => entry.listing === listing)).chosen = 0
      }
    }
    const may = serves(this, session)
    if (may && listing === null) list(this, session)
    else if (!may && listing !== null) unlist(session)
    this.countJoin(session)
  }

  /** @param {Session} session whose join reaches the coordinator, with what it lists */
  countJoin (session) {
    if (session.listing !== null) this.n.joinHave += this.storeOf(session.client).entries.length
    this.meters.joins.add(this.now)
    this.tally('joins', 1)
  }

  /** @param {Session} session ends: its entries go stale, its upload joins its client's */
  leave (session) {
    session.open = false
    if (session.listing !== null) unlist(session)
    this.online.delete(session.client)
    this.served.set(session.client, (this.served.get(session.client) ?? 0) + session.uploaded)
  }

  /** An online adopter asks for an asset. @param {Session} session @param {number} o @param {number} size @param {number} flags */
  serve (session, o, size, flags) {
    const store = this.storeOf(session.client)
    const index = session.assets++
    if ((flags & FLAG_MEDIA) !== 0 && this.config.media === 'origin') {
      this.n.mediaRequests++
      this.n.mediaBytes += size
      this.count('origin', size)
      return
    }
    const entry = store.lru.get(o)
    if (this.config.firstPage === 'origin' && this.views.get(session.client) === 1) {
      this.n.firstPageRequests++
      this.n.firstPageBytes += size
      this.count('origin', size)
      if (entry === undefined) this.keep(session, o, size)
      else touch(store, o, entry)
      return
    }
    if (entry !== undefined) {
      touch(store, o, entry)
      this.count('cache', size)
      this.count('oracle', size)
      return
    }
    this.meters.lookups.add(this.now)
    this.tally('lookups', 1)
    const turn = this.config.channels === 'page' ? session.turn++ : 0
    const from = lookup(this, session, o, size, turn, replayPriority(flags, index, this.config.viewportAssets))
    if (from === null) {
      this.count('origin', size)
    } else {
      this.count('peer', size)
      servedBy(this, from, size)
    }
    this.keep(session, o, size)
  }

  /**
   * Keeps a fetched object, evicting the least recently used to stay under the quota; lists it (an `update`) if the session serves.
   * @param {Session} session @param {number} o @param {number} size
   */
  keep (session, o, size) {
    if (size > this.config.quotaBytes || size > MAX_ENTRY_BYTES) {
      this.n.tooBig++
      return
    }
    const store = this.storeOf(session.client)
    const listing = session.listing
    while (store.bytes + size > this.config.quotaBytes) {
      const [object, victim] = /** @type {[number, Entry]} */ (store.lru.entries().next().value)
      if (listing !== null) {
        const holdings = this.listOf(object)
        removeAt(holdings, holdings.findIndex((entry) => entry.listing === listing))
      }
      store.lru.delete(object)
      removeAt(store.entries, store.entries.indexOf(victim))
      store.bytes -= victim.size
      this.n.evictions++
    }
    const entry = { object: o, size }
    store.entries.push(entry)
    store.lru.set(o, entry)
    store.bytes += size
    if (listing === null) return
    this.listOf(o).push({ listing, chosen: 0 })
    this.meters.updates.add(this.now)
    this.tally('updates', 1)
  }

  /** @param {number} c @returns {Store} */
  storeOf (c) { return getOr(this.stores, c, () => ({ entries: [], lru: new Map(), bytes: 0 })) }

  /** @param {number} c @returns {Traits} */
  traitsOf (c) { return /** @type {Traits} */ (this.traits.get(c)) }

  /** @param {number} o @returns {Holding[]} the index's entries for `o` */
  listOf (o) { return getOr(this.index, o, () => []) }

  /** @param {number} c @returns {{ tokens: number, at: number }} the client's upload token bucket */
  bucket (c) { return getOr(this.buckets, c, () => ({ tokens: this.config.uploadBurst, at: 0 })) }

  /** @returns {import('../engine/engine-result.js').EngineResult} what the engine reports for the same stream */
  finish () {
    for (const session of this.online.values()) this.leave(session) // sessions still open: their uploads count
    const clients = Math.max(0, ...[...this.adopter.keys()].map((c) => c + 1))
    const seen = Array.from({ length: clients }, (_, c) => this.adopter.has(c) ? (this.adopter.get(c) ? 1 : 2) : 0)
    const uploaded = Float64Array.from({ length: clients }, (_, c) => this.served.get(c) ?? 0)
    const entries = [...this.stores.values()].reduce((sum, store) => sum + store.entries.length, 0)
    const { label, adoption, meters } = this
    return engineResult(/** @type {any} */ ({ ...this.n, meters, label, adoption, seen, uploaded, entries }))
  }
}
