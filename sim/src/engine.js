/**
 * The replay model. Each client is a browser with an LRU store under a byte
 * quota. It is online from the first request of a session until its next
 * request (while the session goes on) or until `linger` seconds after its last
 * one. While online its holdings are listed in the coordinator's index. A
 * request for an asset is served, in order, by the client's own store, by a
 * peer, or by the origin:
 *
 *   own store hit → done; else lookup: the index samples at most
 *   `candidateSample` online holders, the coordinator's policy module ranks
 *   them (`selectHolders`), the first holder handed out is marked chosen (as
 *   the coordinator's lookup handler does), and the client tries them in order:
 *   a peer it has no channel to costs a connection that fails with
 *   `failRate` and needs the holder to stay online `setupTime` longer.
 *   Then the client stores the object and sends an `update`.
 *
 * Requests the log has for anything but a successful GET of an asset go to
 * the origin unchanged. Clients outside the adoption fraction always use the
 * origin. Bytes are those the log says the origin sent.
 */
import { HolderRanking } from '../../coordinator/src/policy/peer-selection.js'
import { FLAG_ASSET, FLAG_CONT, growTo } from './batch.js'
import { ChannelTable } from './channels.js'
import { ClientStores, MAX_ENTRY_BYTES } from './client-stores.js'
import { HolderIndex } from './holder-index.js'
import { HOT_STRIDE, LIVE, ONLINE, SESSION, TOKENS, UNTIL, UNTIL_OPEN } from './engine-fields.js'
import { engineResult } from './engine-result.js'
import { ExpiryQueue } from './expiry-queue.js'
import { HourlySeries, PeakRate } from './metrics.js'
import { rankHolders, tryHolders } from './peer-lookup.js'
import { Rng, hashUniform } from './rng.js'

/** Replays batches of requests under one resolved config. */
export class Engine {
  /**
   * @param {Readonly<import('./config.js').SimConfig>} config
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
    // small integers in the lookup loop; no list is longer than 2^30 records
    this.candidateSample = Math.min(config.candidateSample, 0x40000000)
    this.maxHolders = Math.min(config.maxHolders, 0x40000000)
    this.rng = new Rng(config.seed * 7919 + 17)
    this.adoptSalt = config.seed ^ 0x5bd1e995

    this.stores = new ClientStores()
    this.holders = new HolderIndex()
    this.channels = new ChannelTable()
    this.clientCap = 0
    /** per client, [c*HOT_STRIDE + LIVE | CHOSEN | MARK | UNTIL] (engine-fields.js) */
    this.hot = new Int32Array(0)
    /** per client, [c*4 + ONLINE | SESSION | TOKENS] (engine-fields.js) */
    this.cs = new Float64Array(0)
    this.tokenAt = new Float64Array(0)
    this.uploaded = new Float64Array(0)
    /** 0 unseen, 1 adopter seen, 2 non-adopter seen */
    this.seen = new Uint8Array(0)
    this.ensureClients(1024)
    this.holders.ensureObjects(1024)
    this.objectsSeen = 0

    /** clients whose online time ends, in order of that time */
    this.expiries = new ExpiryQueue()

    /** @type {HolderRanking<number>} the policy's ranking of the lookup in progress */
    this.ranking = new HolderRanking(this.maxHolders)
    /** positions of stale records a sample met, dropped after it */
    this.staleBuf = new Int32Array(64)
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
    /** where reads made only to bring memory into the cache put their values, so they are not optimised away */
    this.prefetchSink = 0
    this.online = 0
    this.firstTs = NaN
    this.lastTs = NaN
    this.lookups = new PeakRate()
    this.updates = new PeakRate()
    this.joins = new PeakRate()
    this.hourly = new HourlySeries()
    this.hour = -1
    /** @type {Record<string, Float64Array>} */
    this.hs = this.hourly.series
  }

  /** @param {number} n */
  ensureClients (n) {
    if (n <= this.clientCap) return
    let cap = Math.max(1024, this.clientCap)
    while (cap < n) cap *= 2
    this.clientCap = cap
    const old = this.cs.length / 4
    this.cs = growTo(this.cs, cap * 4)
    this.hot = growTo(this.hot, cap * HOT_STRIDE)
    for (let c = old; c < cap; c++) {
      this.hot[c * HOT_STRIDE + LIVE] = -1
      this.cs[c * 4 + ONLINE] = -Infinity
      this.cs[c * 4 + TOKENS] = this.uploadBurst
    }
    this.tokenAt = growTo(this.tokenAt, cap)
    this.uploaded = growTo(this.uploaded, cap)
    this.seen = growTo(this.seen, cap)
    this.stores.ensureClients(cap)
    this.channels.ensureClients(cap)
  }

  /**
   * Replays a batch (time-ordered, annotated by the session window).
   * @param {import('./batch.js').RequestBatch} b
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
    if (!this.expiries.empty()) this.expire(t)
    const h = this.hourly.hourOf(t)
    if (h !== this.hour) {
      this.hour = h
      this.hs = this.hourly.series
      if (this.hs.onlinePeak[h] < this.online) this.hs.onlinePeak[h] = this.online
    }
    const hs = this.hs
    hs.requests[h]++
    hs.bytes[h] += size

    let adopter = this.seen[c]
    if (adopter === 0) adopter = this.seen[c] = this.adoption >= 1 || hashUniform(c, this.adoptSalt) < this.adoption ? 1 : 2
    if (adopter === 1) {
      const cs = this.cs
      if (cs[c * 4 + ONLINE] < t) this.join(c, t, h)
      if (flags & FLAG_CONT) {
        cs[c * 4 + ONLINE] = Infinity
        this.hot[c * HOT_STRIDE + UNTIL] = UNTIL_OPEN
      } else {
        const until = t + this.linger
        cs[c * 4 + ONLINE] = until
        this.hot[c * HOT_STRIDE + UNTIL] = Math.min(UNTIL_OPEN - 1, Math.floor(until - this.firstTs))
        this.expiries.push(c, until)
      }
      if (flags & FLAG_ASSET) {
        this.assetRequests++
        this.assetBytes += size
        this.serve(t, c, o, size, h)
        return
      }
    } else if (flags & FLAG_ASSET) {
      this.assetRequests++
      this.assetBytes += size
    }
    this.originRequests++
    this.originBytes += size
    hs.originBytes[h] += size
  }

  /**
   * A request for an asset by an online adopter.
   * @param {number} t
   * @param {number} c
   * @param {number} o
   * @param {number} size
   * @param {number} h hour index
   */
  serve (t, c, o, size, h) {
    const stores = this.stores
    const hs = this.hs
    const own = stores.find(c, o)
    if (own !== -1) {
      stores.touch(c, own)
      this.cacheRequests++
      this.cacheBytes += size
      this.oracleRequests++
      this.oracleBytes += size
      hs.cacheBytes[h] += size
      hs.oracleBytes[h] += size
      return
    }
    this.lookups.add(t)
    hs.lookups[h]++
    let from = -1
    if (this.holders.count(o) > 0 && rankHolders(this, c, o, size) > 0) {
      // the requester holds no copy, so every sampled holder is another online client
      this.oracleRequests++
      this.oracleBytes += size
      hs.oracleBytes[h] += size
      from = tryHolders(this, c)
    }
    if (from === -1) {
      this.originRequests++
      this.originBytes += size
      hs.originBytes[h] += size
    } else {
      this.peerRequests++
      this.peerBytes += size
      hs.peerBytes[h] += size
      this.uploaded[from] += size
      if (this.capped) this.cs[from * 4 + TOKENS] -= size
    }
    this.store(t, c, o, size, h)
  }

  /**
   * Puts a fetched object in the client's store, evicting least recently used
   * entries to stay under quota, and lists it in the index (one `update`).
   * @param {number} t
   * @param {number} c
   * @param {number} o
   * @param {number} size
   * @param {number} h
   */
  store (t, c, o, size, h) {
    if (size > this.quota || size > MAX_ENTRY_BYTES) {
      this.tooBig++
      return
    }
    const stores = this.stores
    const holders = this.holders
    const session = this.cs[c * 4 + SESSION]
    while (stores.bytes[c] + size > this.quota) {
      const victim = stores.lruOf(c)
      holders.remove(stores.objectAt(c, victim), c, session)
      stores.removeAt(c, victim)
      this.evictions++
    }
    stores.insert(c, o, size)
    holders.add(o, c, session)
    this.updates.add(t)
    this.hs.updates[h]++
  }

  /**
   * A session starts: the client joins with its holdings, which the index
   * lists under the new session (records of its earlier sessions are stale).
   * @param {number} c
   * @param {number} t
   * @param {number} h
   */
  join (c, t, h) {
    const session = ++this.cs[c * 4 + SESSION]
    this.hot[c * HOT_STRIDE + LIVE] = session
    this.channels.reset(c)
    const stores = this.stores
    const holders = this.holders
    const n = stores.count(c)
    // Read every object's record first, in a loop short enough that the
    // processor has all those cache misses in flight at once; the adds then hit.
    let touched = 0
    for (let i = 0; i < n; i++) touched += holders.count(stores.objectAt(c, i))
    this.prefetchSink += touched
    for (let i = 0; i < n; i++) holders.add(stores.objectAt(c, i), c, session)
    this.joinHave += n
    this.joins.add(t)
    this.hs.joins[h]++
    this.online++
    if (this.hs.onlinePeak[h] < this.online) this.hs.onlinePeak[h] = this.online
  }

  /**
   * A session ends. The coordinator drops the client's holdings; the index
   * here drops them lazily (see rankHolders), so only the client's state changes.
   * @param {number} c
   */
  leave (c) {
    this.hot[c * HOT_STRIDE + LIVE] = -1
    this.online--
  }

  /**
   * Ends the sessions of clients whose online time is over before `t`.
   * @param {number} t
   */
  expire (t) {
    const q = this.expiries
    while (!q.empty()) {
      const until = q.peekTime()
      if (until >= t) break
      const c = q.shift()
      // a later request may have extended the client's time; then this entry is stale
      if (this.cs[c * 4 + ONLINE] === until && this.hot[c * HOT_STRIDE + LIVE] !== -1) this.leave(c)
    }
  }

  /**
   * The results so far (normally called once, at the end of the input).
   * @returns {import('./engine-result.js').EngineResult}
   */
  finish () {
    return engineResult(this)
  }
}
