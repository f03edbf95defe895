/**
 * The replay model. Each client is a browser with an LRU store under a byte
 * quota. It is online from the first request of a session until its next
 * request (while the session goes on) or until `linger` seconds after its last
 * one. While online its holdings are listed in the coordinator's index,
 * unless it does not serve (receive-only, its upload budget spent,
 * quarantined). Its requests fall into page views (page-views.js); with
 * `channels: 'page'` each page view is a new page script: a new coordinator
 * join and no open channels. A request for an asset is served by:
 *
 *   audio or video (`media: 'origin'`) or the visitor's first page view ever
 *   (`firstPage: 'origin'`, kept and announced) → the origin; else the own
 *   store; else a lookup, by the coordinator's peer-selection rule (its policy
 *   module, shared): sample at most `candidateSample` online holders from the
 *   index, rank them, mark the first handed out as chosen for this asset (as
 *   the coordinator's lookup handler does); the client tries them
 *   (peer-lookup.js: channels, failed connections and their reports, the race
 *   with the origin). Then the client stores the object and sends an `update`.
 *
 * Requests the log has for anything but a successful GET of an asset go to
 * the origin unchanged. Clients outside the adoption fraction always use the
 * origin. Bytes are those the log says the origin sent.
 *
 * This file holds the engine's state and its step over requests; what
 * happens at each step lives beside it, as functions of that state:
 * sessions.js (joins, page views, ends), asset-request.js (one asset
 * request), peer-lookup.js (the lookup and the client's tries), serving.js
 * (listing, upload, budgets), no-channel-reports.js (reports, quarantine).
 */
import { HolderRanking } from '../../../policy/peer-selection.js'
import { blames } from '../../../policy/report-rule.js'
import { fromOrigin, serveAsset } from './asset-request.js'
import { FLAG_ASSET, FLAG_CONT, growTo } from '../batch.js'
import { ChannelTable } from './channels.js'
import { passOverS } from '../client-timing.js'
import { ClientStores } from './client-stores.js'
import { HolderIndex } from './holder-index.js'
import { engineResult } from './engine-result.js'
import { ExpiryQueue } from './expiry-queue.js'
import { ReplayMeters } from './metrics.js'
import { ReportedPeers } from './no-channel-reports.js'
import { CLIENT, OnlineSlots, SLOT_STRIDE, TAG } from './online-slots.js'
import { startsPageView } from '../page-views.js'
import { ReportTally } from './report-tally.js'
import { adopts, hasTrait, replayRng } from '../rng.js'
import { RECEIVE_ONLY, UNTRAVERSABLE } from './serving.js'
import { expire, join, startPage } from './sessions.js'

/** Replays batches of requests under one resolved config. */
export class Engine {
  /**
   * @param {Readonly<import('../config.js').SimConfig>} config
   * @param {{ adoption?: number, label?: string }} [options] adoption overrides config.adoption (the plug-in baseline)
   */
  constructor (config, options = {}) {
    this.config = config
    this.label = options.label ?? 'maygh'
    this.adoption = options.adoption ?? config.adoption
    this.linger = config.linger
    this.quota = config.quotaBytes
    this.failRate = config.failRate
    this.setupTime = config.setupTime
    this.uploadRate = config.uploadRate
    this.uploadBurst = config.uploadBurst
    this.capped = config.uploadRate !== Infinity
    this.untraversable = config.untraversable
    this.receiveOnly = config.receiveOnly
    this.firstPageOrigin = config.firstPage === 'origin'
    this.mediaOrigin = config.media === 'origin'
    this.pageChannels = config.channels === 'page'
    this.hedged = config.hedge !== 'off'
    this.viewportAssets = config.viewportAssets
    this.lookupTime = config.lookupTime
    this.originTtfb = config.originTtfb
    this.originRate = config.originRate
    this.peerRate = config.peerRate
    /** seconds the client waits for a new connection before passing the holder over */
    this.passOver = passOverS(config.setupTime)
    this.uploadSession = config.uploadSession
    this.uploadDay = config.uploadDay
    /** whether a `no_channel` report counts toward quarantine under the rule replayed */
    this.reportsCount = config.reportRule === 'all' || blames('no_channel')
    this.reportThreshold = config.reportThreshold
    this.reportWindow = config.reportWindow
    this.quarantine = config.quarantine
    // small integers in the lookup loop; no list is longer than 2^30 records
    this.candidateSample = Math.min(config.candidateSample, 0x40000000) | 0
    this.maxHolders = Math.min(config.maxHolders, 0x40000000) | 0
    /** the run's random stream: draws taken in the order peer-lookup.js lists */
    this.rng = replayRng(config.seed)
    this.seed = config.seed

    this.stores = new ClientStores()
    /** the coordinator's content-location index: records [slot, tag, chosen] of online holders' sessions */
    this.holders = new HolderIndex()
    /** the coordinator's peer records: per-session state of online clients, by slot */
    this.slots = new OnlineSlots()
    /** per slot, the data channels its session has open */
    this.channels = new ChannelTable()
    this.channels.ensureOwners(this.slots.capacity)
    /** per slot, the peers its current page view has reported */
    this.reported = new ReportedPeers()
    this.reported.ensureOwners(this.slots.capacity)
    this.clientCap = 0
    /** per client, its slot while online, −1 while offline */
    this.slotOf = new Int32Array(0)
    /** per client, bytes it served to peers in its ended sessions (finish adds the open ones') */
    this.uploaded = new Float64Array(0)
    /** per client, upload tokens left and when they were last topped up (only with an upload cap) */
    this.tokens = new Float64Array(0)
    this.tokenAt = new Float64Array(0)
    /** 0 unseen, 1 adopter seen, 2 non-adopter seen */
    this.seen = new Uint8Array(0)
    /** per adopter, bits UNTRAVERSABLE, RECEIVE_ONLY, QUARANTINED_ONCE (serving.js) */
    this.traits = new Uint8Array(0)
    /** per client, NO_VIEW, FIRST_VIEW or LATER_VIEW (sessions.js) */
    this.pageState = new Uint8Array(0)
    /** per client, when its quarantine ends (0: never quarantined) */
    this.quarantinedUntil = new Float64Array(0)
    /** per client, new connections it tried in a row that failed (the client's reach.js: kept across visits) */
    this.failedInRow = new Int32Array(0)
    /** per client, the UTC day (of log time) of its latest upload, and bytes it served that day */
    this.uploadDayOf = new Int32Array(0)
    this.uploadedToday = new Float64Array(0)
    /** who reported whom lately (only under a rule that counts `no_channel`) */
    this.reports = new ReportTally()
    this.ensureClients(1024)
    this.holders.ensureObjects(1024)
    this.objectsSeen = 0

    /** clients whose online time ends, in order of that time */
    this.expiries = new ExpiryQueue()

    /** @type {HolderRanking<number>} the policy's ranking of the lookup in progress, by slot */
    this.ranking = new HolderRanking(this.maxHolders, -1)
    /** positions of stale records a sample met, dropped after it */
    this.staleBuf = new Int32Array(64)
    /** the holders a page tries, in its order (peer-lookup.js) */
    this.tryBuf = new Int32Array(64)
    /** the page's turn for the lookup in progress */
    this.turn = 0
    // state `accept` reads for the lookup in progress
    this.now = -Infinity
    this.size = 0
    /** the coordinator's clock for `markChosen`: strictly increasing, as the coordinator's is */
    this.clock = 0
    /** lookups so far: the `MARK` of the current one */
    this.markSeq = 0

    // totals
    this.requests = 0
    this.bytes = 0
    this.originRequests = 0
    this.originBytes = 0
    this.peerRequests = 0
    this.peerBytes = 0
    this.cacheRequests = 0
    this.cacheBytes = 0
    this.assetRequests = 0
    this.assetBytes = 0
    this.oracleRequests = 0
    this.oracleBytes = 0
    this.lookupHits = 0
    this.attempts = 0
    this.failures = 0
    this.setupRefusals = 0
    this.reused = 0
    this.evictions = 0
    this.tooBig = 0
    this.joinHave = 0
    this.pageViews = 0
    this.firstPageRequests = 0
    this.firstPageBytes = 0
    this.mediaRequests = 0
    this.mediaBytes = 0
    this.setupsShared = 0
    this.racesLost = 0
    this.reportsSent = 0
    this.reportsCounted = 0
    this.quarantines = 0
    this.quarantinedClients = 0
    this.sessionBudgetStops = 0
    this.dayBudgetStops = 0
    /** where reads made only to bring memory into the cache put their values, so they are not optimised away */
    this.prefetchSink = 0
    this.online = 0
    this.firstTs = NaN
    this.lastTs = NaN
    this.meters = new ReplayMeters()
  }

  /** @param {number} n */
  ensureClients (n) {
    if (n <= this.clientCap) return
    let cap = Math.max(1024, this.clientCap)
    while (cap < n) cap *= 2
    this.clientCap = cap
    this.slotOf = growTo(this.slotOf, cap, -1)
    this.uploaded = growTo(this.uploaded, cap)
    this.seen = growTo(this.seen, cap)
    this.traits = growTo(this.traits, cap)
    this.pageState = growTo(this.pageState, cap)
    this.quarantinedUntil = growTo(this.quarantinedUntil, cap)
    this.failedInRow = growTo(this.failedInRow, cap)
    if (this.uploadDay !== Infinity) {
      this.uploadDayOf = growTo(this.uploadDayOf, cap)
      this.uploadedToday = growTo(this.uploadedToday, cap)
    }
    if (this.capped) {
      this.tokens = growTo(this.tokens, cap, this.uploadBurst)
      this.tokenAt = growTo(this.tokenAt, cap)
    }
    this.stores.ensureClients(cap)
  }

  /**
   * Replays a batch (time-ordered, annotated by the session window).
   * @param {import('../batch.js').RequestBatch} b
   */
  processBatch (b) {
    let maxClient = 0
    let maxObject = 0
    for (let i = 0; i < b.n; i++) {
      if (b.client[i] > maxClient) maxClient = b.client[i]
      if (b.object[i] > maxObject) maxObject = b.object[i]
    }
    this.ensureClients(maxClient + 1)
    this.holders.ensureObjects(maxObject + 1)
    if (maxObject + 1 > this.objectsSeen) this.objectsSeen = maxObject + 1
    for (let i = 0; i < b.n; i++) this.step(b.ts[i], b.client[i], b.object[i], b.bytes[i], b.flags[i])
  }

  /**
   * @param {number} t
   * @param {number} c
   * @param {number} o
   * @param {number} size
   * @param {number} flags
   */
  step (t, c, o, size, flags) {
    if (t < this.now) t = this.now
    this.now = t
    if (this.requests === 0) this.firstTs = t
    this.lastTs = t
    this.requests++
    this.bytes += size
    if (!this.expiries.empty()) expire(this, t)
    const meters = this.meters
    if (t >= meters.hourEnd) meters.startHour(t, this.online)
    const h = meters.hour
    const hs = meters.series
    hs.requests[h]++
    hs.bytes[h] += size

    let adopter = this.seen[c]
    if (adopter === 0) adopter = this.firstSeen(c)
    if (adopter === 1) {
      // online clients have a slot; expire(t) has closed those whose time is over
      let s = this.slotOf[c]
      const joined = s === -1
      if (joined) s = join(this, c, t, h)
      const slots = this.slots
      if (flags & FLAG_CONT) {
        slots.until[s] = Infinity
      } else {
        const until = t + this.linger
        slots.until[s] = until
        this.expiries.push(c, until)
      }
      if (startsPageView(flags, t - slots.lastAt[s])) startPage(this, c, s, t, h, joined)
      slots.lastAt[s] = t
      if (flags & FLAG_ASSET) {
        this.assetRequests++
        this.assetBytes += size
        serveAsset(this, t, c, s, o, size, h, flags)
        return
      }
    } else if (flags & FLAG_ASSET) {
      this.assetRequests++
      this.assetBytes += size
    }
    fromOrigin(this, size, h)
  }

  /**
   * A client's first request: whether it adopts, and its traits (by hashes of
   * the client, not draws, as `adopts`: larger fractions contain smaller ones).
   * @param {number} c
   * @returns {number} 1 adopter, 2 not
   */
  firstSeen (c) {
    if (!adopts(c, this.adoption, this.seed)) return (this.seen[c] = 2)
    this.traits[c] = (hasTrait(c, 'untraversable', this.untraversable, this.seed) ? UNTRAVERSABLE : 0) |
      (hasTrait(c, 'receiveOnly', this.receiveOnly, this.seed) ? RECEIVE_ONLY : 0)
    return (this.seen[c] = 1)
  }

  /** Renumbers session tags and page ids before they overflow (online-slots.js). */
  renumber () {
    this.slots.renumber([this.holders.lists], [this.channels.lists, this.reported.lists])
  }

  /** @returns {number} objects held in all stores (for engineResult) */
  get entries () {
    return this.stores.live
  }

  /**
   * The results so far (normally called once, at the end of the input).
   * @returns {import('./engine-result.js').EngineResult}
   */
  finish () {
    // sessions still open: their uploads so far join their clients' totals
    const slots = this.slots
    for (let s = 0; s < slots.capacity; s++) {
      if (slots.state[s * SLOT_STRIDE + TAG] === 0) continue
      this.uploaded[slots.state[s * SLOT_STRIDE + CLIENT]] += slots.uploaded[s]
      slots.uploaded[s] = 0
    }
    return engineResult(this)
  }
}
