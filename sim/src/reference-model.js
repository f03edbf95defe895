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
 * first holder's entry for the asset: coordinator/src/policy/peer-selection.js),
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
 *   failed the page, from the page's turn.
 * The meters (metrics.js) and the figures derived from the tallies
 * (engine-result.js) are shared: this file restates the model's state.
 */
import { HolderRanking, rankKey, sampleNext, sampleStart } from '../../coordinator/src/policy/peer-selection.js'
import { blames } from '../../coordinator/src/policy/report-rule.js'
import { FLAG_ASSET, FLAG_CONT, FLAG_MEDIA } from './batch.js'
import { PASS_OVER_S, hedgeDeadline } from './client-timing.js'
import { MAX_ENTRY_BYTES } from './client-stores.js'
import { engineResult } from './engine-result.js'
import { HourlySeries, PeakRate } from './metrics.js'
import { startsPageView } from './page-views.js'
import { adopts, hasTrait, replayRng } from './rng.js'

const COUNTERS = ['requests', 'bytes', 'originRequests', 'originBytes', 'peerRequests', 'peerBytes', 'cacheRequests', 'cacheBytes',
  'assetRequests', 'assetBytes', 'oracleRequests', 'oracleBytes', 'attempts', 'failures', 'reused', 'setupRefusals', 'evictions', 'tooBig', 'lookupHits', 'joinHave', 'objectsSeen',
  'pageViews', 'firstPageRequests', 'firstPageBytes', 'mediaRequests', 'mediaBytes', 'setupsShared', 'racesLost', 'wastedUpload',
  'reportsSent', 'reportsCounted', 'quarantines', 'quarantinedClients', 'sessionBudgetStops', 'dayBudgetStops']

/**
 * One online session of a client.
 * @typedef {object} Session
 * @property {number} client
 * @property {boolean} open false once it ended
 * @property {number} until online until then (Infinity while the session goes on)
 * @property {number} uploaded bytes served to peers in this session
 * @property {number} lastAt the time of its latest request (−∞ before the first)
 * @property {Page} page its current peer record (the coordinator's peer id: a page view's, or the session's)
 * @property {number} turn lookups its current page has made
 * @property {Map<Page, number>} channels peer records it opened a data channel to (or tried to) → when the channel opens (+∞: failed)
 * @property {Listing | null} listing what the coordinator lists for it, null while it does not serve
 */
/** @typedef {{ since: number }} Page a peer record, joined at the coordinator's clock `since` */
/** @typedef {{ session: Session, live: boolean }} Listing one stretch of a session's serving: its index entries are stale once it ends */
/**
 * One entry of an asset's holder list in the coordinator's index.
 * @typedef {object} Holding
 * @property {Listing} listing
 * @property {number} chosen the coordinator's clock when a lookup of this asset last marked it (0 never)
 */
/** @typedef {{ entries: Entry[], lru: Map<number, Entry>, bytes: number }} Store entries in storage order, and by recency (least recent first) @typedef {{ object: number, size: number }} Entry */
/** @typedef {{ untraversable: boolean, receiveOnly: boolean }} Traits */

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
    this.deadline = hedgeDeadline(config.originTtfb)
    /** @type {Record<string, number>} the totals engineResult reads, by name */
    this.n = { ...Object.fromEntries(COUNTERS.map((k) => [k, 0])), firstTs: NaN, lastTs: NaN }
    /** @type {Map<number, boolean>} every client seen: whether it adopts */
    this.adopter = new Map()
    /** @type {Map<number, Traits>} adopters' traits */
    this.traits = new Map()
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
  tally (series, amount) { this.meters.hourly.series[series][this.hour] += amount }
  notePeakOnline () {
    const peak = this.meters.hourly.series.onlinePeak
    peak[this.hour] = Math.max(peak[this.hour], this.online.size)
  }

  /** A session starts: a new peer record (no channels) listing the store as new entries, never chosen, if it serves. @param {number} c @param {number} t */
  join (c, t) {
    /** @type {Session} */
    const session = { client: c, open: true, until: t, uploaded: 0, lastAt: -Infinity, page: { since: this.clock }, turn: 0, channels: new Map(), listing: null }
    this.online.set(c, session)
    if (this.serves(session)) this.list(session)
    this.countJoin(session)
    this.notePeakOnline()
    return session
  }

  /**
   * A page view begins; with page-lifetime channels, one after the session's first is a new page
   * script: a new peer record (holdings never chosen, no channels) and a new join.
   * @param {Session} session @param {boolean} joined whether the session's join was this page's
   */
  startPage (session, joined) {
    this.n.pageViews++
    this.views.set(session.client, (this.views.get(session.client) ?? 0) + 1)
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
    const serves = this.serves(session)
    if (serves && listing === null) this.list(session)
    else if (!serves && listing !== null) this.unlist(session)
    this.countJoin(session)
  }

  /** @param {Session} session whose join reaches the coordinator, with what it lists */
  countJoin (session) {
    if (session.listing !== null) this.n.joinHave += this.storeOf(session.client).entries.length
    this.meters.joins.add(this.now)
    this.tally('joins', 1)
  }

  /** @param {Session} session @returns {boolean} whether it may serve now: not receive-only, quarantined or over a budget */
  serves (session) {
    const c = session.client
    const { uploadSession, uploadDay } = this.config
    if (this.traitsOf(c).receiveOnly || this.now < (this.quarantinedUntil.get(c) ?? 0) || session.uploaded >= uploadSession) return false
    const today = this.today.get(c)
    return (today !== undefined && today.day === Math.floor(this.now / 86400) ? today.bytes : 0) < uploadDay
  }

  /** @param {Session} session starts serving: the coordinator lists its store (storage order), never chosen */
  list (session) {
    const listing = session.listing = { session, live: true }
    for (const { object } of this.storeOf(session.client).entries) this.listOf(object).push({ listing, chosen: 0 })
  }

  /** @param {Session} session stops serving: unlisted at once (its entries go stale) */
  unlist (session) {
    /** @type {Listing} */ (session.listing).live = false
    session.listing = null
  }

  /** @param {Session} session ends: its entries go stale, its upload joins its client's */
  leave (session) {
    session.open = false
    if (session.listing !== null) this.unlist(session)
    this.online.delete(session.client)
    this.served.set(session.client, (this.served.get(session.client) ?? 0) + session.uploaded)
  }

  /** An online adopter asks for an asset. @param {Session} session @param {number} o @param {number} size @param {number} flags */
  serve (session, o, size, flags) {
    const store = this.storeOf(session.client)
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
    const from = this.lookup(session, o, size, turn)
    if (from === null) {
      this.count('origin', size)
    } else {
      this.count('peer', size)
      this.servedBy(from, size)
    }
    this.keep(session, o, size)
  }

  /**
   * A lookup by the shared rule: sample (stale records are read, not counted,
   * then dropped), rank (asking `accepts` only of holders the ranking wants),
   * mark the first one's entry for `o`; then the asker tries them.
   * @param {Session} asker @param {number} o @param {number} size @param {number} turn the page's turn
   * @returns {Session | null} the holder that served
   */
  lookup (asker, o, size, turn) {
    const list = this.listOf(o)
    const ranking = new HolderRanking(this.config.maxHolders, asker)
    const want = this.config.candidateSample
    const stale = []
    let online = 0
    for (let pos = sampleStart(list.length, want, this.rng), read = 1; pos !== -1; pos = sampleNext(pos, read++, online, list.length, want)) {
      const { listing, chosen } = list[pos]
      if (!listing.live) {
        stale.push(pos)
        continue
      }
      online++
      const holder = listing.session
      const connected = this.isOpen(asker, holder)
      const key = rankKey(connected, chosen)
      if (ranking.wants(holder, key) && this.accepts(holder, connected, size)) ranking.insert(holder, key)
    }
    for (const pos of stale.sort((a, b) => b - a)) removeAt(list, pos)
    if (online > 0) this.count('oracle', size)
    if (ranking.size === 0) return null
    this.n.lookupHits++
    const marked = /** @type {Holding} */ (list.find((entry) => entry.listing === /** @type {Session} */ (ranking.marked()).listing))
    marked.chosen = ++this.clock
    return this.tryHolders(asker, ranking.ids.slice(0, ranking.size), size, turn)
  }

  /**
   * The asker tries the holders (peer-lookup.js `tryHolders`, plainly).
   * @param {Session} asker @param {Session[]} ranked @param {number} size @param {number} turn
   * @returns {Session | null}
   */
  tryHolders (asker, ranked, size, turn) {
    const { setupTime, lookupTime, originTtfb, originRate, peerRate } = this.config
    const hedged = this.config.hedge === 'on'
    const t = this.now
    let order = ranked
    if (this.config.channels === 'page') {
      order = ranked.filter((holder) => asker.channels.get(holder.page) !== Infinity)
      const start = order.length > 0 ? turn % order.length : 0
      order = [...order.slice(start), ...order.slice(0, start)]
    }
    let tau = lookupTime
    for (const holder of order) {
      const ready = asker.channels.get(holder.page)
      let firstByte
      if (ready !== undefined && ready <= t) {
        this.n.reused++
        firstByte = tau
      } else if (ready === Infinity) {
        continue
      } else if (ready !== undefined) {
        this.n.setupsShared++
        firstByte = Math.max(tau, ready - t)
      } else {
        this.n.attempts++
        if (this.fails(asker, holder)) {
          this.n.failures++
          this.reportNoChannel(asker, holder)
          if (this.config.channels === 'page') asker.channels.set(holder.page, Infinity)
          if (hedged) tau += PASS_OVER_S
          continue
        }
        asker.channels.set(holder.page, hedged ? t + tau + setupTime : t)
        firstByte = tau + setupTime
      }
      if (!hedged || firstByte <= this.deadline) return holder
      const originDone = this.deadline + originTtfb + size / originRate
      const peerDone = firstByte + size / peerRate
      if (peerDone < originDone) return holder
      this.n.racesLost++
      if (originDone > firstByte) this.n.wastedUpload += Math.min(size, (originDone - firstByte) * peerRate)
      return null
    }
    return null
  }

  /** @param {Session} asker @param {Session} holder @returns {boolean} whether the asker has an open channel to the holder's current peer record */
  isOpen (asker, holder) {
    const ready = asker.channels.get(holder.page)
    return ready !== undefined && ready <= this.now
  }

  /** @param {Session} asker @param {Session} holder @returns {boolean} whether a new connection between them fails */
  fails (asker, holder) {
    if (this.traitsOf(asker.client).untraversable || this.traitsOf(holder.client).untraversable) return true
    if (this.config.hedge === 'on' && this.config.setupTime > PASS_OVER_S) return true
    return this.config.failRate > 0 && this.rng.random() < this.config.failRate
  }

  /**
   * A `no_channel` report, judged as the coordinator's quarantine.js judges it.
   * @param {Session} asker @param {Session} holder
   */
  reportNoChannel (asker, holder) {
    this.n.reportsSent++
    if (!(this.config.reportRule === 'all' || blames('no_channel'))) return
    const subject = holder.client
    if (this.now < (this.quarantinedUntil.get(subject) ?? 0) || asker.client === subject || holder.listing === null) return
    this.n.reportsCounted++
    const reporters = getOr(this.reports, subject, () => new Map())
    reporters.set(asker.client, this.now)
    for (const [who, when] of reporters) if (when <= this.now - this.config.reportWindow) reporters.delete(who)
    if (reporters.size < this.config.reportThreshold) return
    this.reports.delete(subject)
    if (!this.quarantinedUntil.has(subject)) this.n.quarantinedClients++
    this.quarantinedUntil.set(subject, this.now + this.config.quarantine)
    this.n.quarantines++
    this.unlist(holder)
  }

  /**
   * The holder served `size` bytes: its upload, token bucket and budgets (past one it stops serving).
   * @param {Session} holder @param {number} size
   */
  servedBy (holder, size) {
    holder.uploaded += size
    if (this.config.uploadRate !== Infinity) this.bucket(holder.client).tokens -= size
    const day = Math.floor(this.now / 86400)
    const today = getOr(this.today, holder.client, () => ({ day, bytes: 0 }))
    if (today.day !== day) Object.assign(today, { day, bytes: 0 })
    today.bytes += size
    if (holder.listing === null) return
    if (holder.uploaded >= this.config.uploadSession) this.n.sessionBudgetStops++
    else if (today.bytes >= this.config.uploadDay) this.n.dayBudgetStops++
    else return
    this.unlist(holder)
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
        const list = this.listOf(object)
        removeAt(list, list.findIndex((entry) => entry.listing === listing))
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

/** @param {Store} store @param {number} o @param {Entry} entry now the most recently used */
function touch (store, o, entry) {
  store.lru.delete(o)
  store.lru.set(o, entry)
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
