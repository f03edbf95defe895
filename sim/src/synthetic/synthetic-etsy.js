/**
 * A synthetic Etsy-like week of static-asset requests, as an origin's log would
 * hold them (requests that missed the browser's HTTP cache), with the page
 * requests that begin each page view. Deterministic for a seed. Parameters
 * and the public facts behind their defaults are in docs/simulator.md ("The
 * synthetic Etsy week").
 *
 * Sessions arrive as a Poisson process whose rate follows a daily and a weekly
 * cycle (thinning). A session belongs to a new visitor, a returning one, or one
 * of a few heavy clients, and is a burst of 6–16 asset requests in page views:
 * a page request, then 2–6 assets requested together (fractions of a second
 * apart), then a pause to read before the next page. An asset request is for
 * a site-wide asset (on a cold first page load: a style or script bundle,
 * flagged `FLAG_BLOCKING`), a new photo nobody will ask for again, or a
 * catalog object drawn from Zipf(alpha). Sizes are lognormal with a Pareto
 * tail, fixed per object by a hash. Active sessions wait in a heap keyed by
 * their next request time, so output is in time order.
 */
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_PAGE, RequestBatch } from '../batch.js'
import { resolveEtsyParams } from './etsy-params.js'
import { Rng, hash2 } from '../rng.js'
import { ZipfSampler } from './zipf.js'

/** object ids below this are tracked per client so an HTTP-cached object is not asked for again */
const HOT = 32

/** Generates the trace batch by batch. */
export class EtsyGenerator {
  /** @param {Partial<import('./etsy-params.js').EtsyParams>} [overrides] */
  constructor (overrides = {}) {
    const p = this.params = resolveEtsyParams(overrides)
    this.rng = new Rng(p.seed)
    this.end = p.start + p.days * 86400
    this.catalog = Math.max(1, Math.round(p.requests * p.catalogPerRequest))
    this.zipf = new ZipfSampler(this.catalog, p.alpha)
    this.catalogBase = p.siteAssets
    /** the object id of every page request (pages are never stored, so one id stands for them all) */
    this.pageObject = p.siteAssets + this.catalog
    this.oneTimeBase = this.pageObject + 1
    this.nextOneTime = this.oneTimeBase
    this.catalogSize = this.sizes(this.catalog, this.catalogBase)
    this.siteSize = new Uint32Array(p.siteAssets)
    for (let i = 0; i < p.siteAssets; i++) this.siteSize[i] = this.objectSize(i, p.siteAssetMedian, 0.5, false)
    // session arrivals: rate(t) = base · shape(t), shape ≤ shapeMax
    const meanLen = (p.sessionMin + p.sessionMax) / 2
    const perSession = (1 - p.heavyShare) * meanLen + p.heavyShare * meanLen * p.heavyFactor
    let integral = 0
    for (let t = p.start; t < this.end; t += 60) integral += this.shape(t + 30) * Math.min(60, this.end - t)
    this.base = p.requests / perSession / integral
    this.shapeMax = (1 + p.dailyAmplitude) * (1 + p.weeklyAmplitude)
    this.nextArrival = p.start
    this.advanceArrival()
    // clients: heavy ones are 0 … heavyClients-1
    this.nextClient = p.heavyClients
    this.hotSeen = new Uint32Array(1 << 16)
    // active sessions: a binary heap of slots keyed by next request time
    this.heapKey = new Float64Array(1024)
    this.heapSlot = new Int32Array(1024)
    this.heapN = 0
    this.slotClient = new Int32Array(1024)
    this.slotLeft = new Int32Array(1024)
    this.slotSite = new Int32Array(1024)
    this.slotTemplate = new Int32Array(1024)
    /** per slot, assets left in the current page view (0: a page request comes next) */
    this.slotPageLeft = new Int32Array(1024)
    this.freeSlots = []
    this.slotsUsed = 0
    this.generated = 0
    this.pages = 0
    this.now = p.start
    this.touched = new Uint8Array(this.catalog)
    this.siteTouched = new Uint8Array(p.siteAssets)
    this.assetGapMu = Math.log(p.assetGapMedian)
    this.pageGapMu = Math.log(p.pageGapMedian)
  }

  /**
   * Sizes of `n` objects with ids from `base`.
   * @param {number} n
   * @param {number} base
   * @returns {Uint32Array}
   */
  sizes (n, base) {
    const out = new Uint32Array(n)
    for (let i = 0; i < n; i++) out[i] = this.objectSize(base + i, this.params.sizeMedian, this.params.sizeSigma, true)
    return out
  }

  /**
   * A size fixed by the object's id: lognormal body, Pareto tail.
   * @param {number} id
   * @param {number} median
   * @param {number} sigma
   * @param {boolean} tail whether the object may be in the tail
   * @returns {number}
   */
  objectSize (id, median, sigma, tail) {
    const p = this.params
    const u1 = (hash2(p.seed, id * 3 + 1) + 0.5) / 4294967296
    const u2 = (hash2(p.seed, id * 3 + 2) + 0.5) / 4294967296
    let size
    if (tail && hash2(p.seed, id * 3 + 3) / 4294967296 < p.tailShare) {
      size = p.tailMin * u1 ** (-1 / p.tailAlpha)
    } else {
      const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
      size = median * Math.exp(sigma * z)
    }
    return Math.max(64, Math.min(p.sizeMax, Math.round(size)))
  }

  /**
   * Relative session rate at time t (mean ≈ 1 over whole weeks).
   * @param {number} t
   * @returns {number}
   */
  shape (t) {
    const p = this.params
    const local = t + p.utcOffset * 3600
    const hour = (((local % 86400) + 86400) % 86400) / 3600
    const day = ((local / 86400 + 4) % 7 + 7) % 7 // 1970-01-01 was a Thursday; day 0 = Sunday
    return (1 + p.dailyAmplitude * Math.cos((2 * Math.PI * (hour - p.peakHour)) / 24)) *
      (1 + p.weeklyAmplitude * Math.cos((2 * Math.PI * (day - p.peakDay)) / 7))
  }

  /** Moves `nextArrival` to the next session start (thinning of a Poisson process). */
  advanceArrival () {
    const rmax = this.base * this.shapeMax
    let t = this.nextArrival
    for (;;) {
      t += this.rng.exponential(1 / rmax)
      if (t >= this.end || this.rng.random() * this.shapeMax < this.shape(t)) break
    }
    this.nextArrival = t
  }

  /** @returns {number} share of the trace's time generated */
  progress () {
    return Math.min(1, (this.now - this.params.start) / (this.end - this.params.start))
  }

  /**
   * The requests, in time order; the same batch object is refilled each time.
   * @returns {Generator<RequestBatch>}
   */
  * batches () {
    const batch = new RequestBatch()
    for (;;) {
      batch.n = 0
      while (!batch.full()) {
        if (!this.next(batch)) break
      }
      if (batch.n > 0) yield batch
      if (!batch.full()) return
    }
  }

  /**
   * Emits the next request into `batch`.
   * @param {RequestBatch} batch
   * @returns {boolean} false at the end of the trace
   */
  next (batch) {
    while (this.nextArrival < this.end && (this.heapN === 0 || this.nextArrival <= this.heapKey[0])) {
      this.startSession(this.nextArrival)
      this.advanceArrival()
    }
    if (this.heapN === 0) return false
    const t = this.heapKey[0]
    const slot = this.heapSlot[0]
    if (t >= this.end) return false
    this.now = t
    const c = this.slotClient[slot]
    const p = this.params
    const rng = this.rng
    if (this.slotPageLeft[slot] === 0) {
      // a page view begins: the page, then its assets
      batch.push(t, c, this.pageObject, p.pageBytes, FLAG_PAGE)
      this.pages++
      this.slotPageLeft[slot] = Math.min(this.slotLeft[slot], p.pageAssetsMin + rng.int(p.pageAssetsMax - p.pageAssetsMin + 1))
      this.heapKey[0] = t + Math.exp(this.assetGapMu + p.gapSigma * rng.normal())
      this.siftDown(0)
      return true
    }
    const o = this.pickObject(slot, c)
    const size = o < this.catalogBase ? this.siteSize[o] : o < this.oneTimeBase ? this.catalogSize[o - this.catalogBase] : this.objectSize(o, p.sizeMedian, p.sizeSigma, true)
    // the site-wide assets are the page templates' CSS and JS bundles: they block rendering
    batch.push(t, c, o, size, o < this.catalogBase ? FLAG_ASSET | FLAG_BLOCKING : FLAG_ASSET)
    this.generated++
    this.slotPageLeft[slot]--
    if (--this.slotLeft[slot] > 0) {
      const mu = this.slotPageLeft[slot] > 0 ? this.assetGapMu : this.pageGapMu
      this.heapKey[0] = t + Math.exp(mu + p.gapSigma * rng.normal())
      this.siftDown(0)
    } else {
      this.freeSlots.push(slot)
      this.heapN--
      if (this.heapN > 0) {
        this.heapKey[0] = this.heapKey[this.heapN]
        this.heapSlot[0] = this.heapSlot[this.heapN]
        this.siftDown(0)
      }
    }
    return true
  }

  /**
   * Chooses the session's client and length and queues its first request at t.
   * @param {number} t
   */
  startSession (t) {
    const p = this.params
    const rng = this.rng
    let c
    let len = p.sessionMin + rng.int(p.sessionMax - p.sessionMin + 1)
    let cold
    const u = rng.random()
    if (u < p.heavyShare) {
      c = rng.int(p.heavyClients)
      len = Math.round(len * p.heavyFactor)
      cold = this.hotBits(c) === 0
    } else if (u < p.heavyShare + p.returnShare && this.nextClient > p.heavyClients) {
      c = p.heavyClients + rng.int(this.nextClient - p.heavyClients)
      cold = rng.random() < p.siteAssetRefetch
    } else {
      c = this.nextClient++
      cold = true
    }
    if (c >= this.hotSeen.length) {
      const next = new Uint32Array(this.hotSeen.length * 2)
      next.set(this.hotSeen)
      this.hotSeen = next
    }
    let slot = this.freeSlots.pop()
    if (slot === undefined) {
      slot = this.slotsUsed++
      if (slot >= this.slotClient.length) this.growSlots()
    }
    this.slotClient[slot] = c
    this.slotLeft[slot] = len
    this.slotSite[slot] = cold ? p.siteAssetsPerLoad : 0
    this.slotPageLeft[slot] = 0
    this.slotTemplate[slot] = p.siteAssetsPerLoad > 0 ? rng.int(Math.floor(p.siteAssets / p.siteAssetsPerLoad)) : 0
    if (this.heapN === this.heapKey.length) this.growHeap()
    const i = this.heapN++
    this.heapKey[i] = t
    this.heapSlot[i] = slot
    this.siftUp(i)
  }

  /**
   * @param {number} c
   * @returns {number} bitmask of hot objects `c` has fetched
   */
  hotBits (c) {
    return c < this.hotSeen.length ? this.hotSeen[c] : 0
  }

  /**
   * The object of the session's next request.
   * @param {number} slot
   * @param {number} c
   * @returns {number}
   */
  pickObject (slot, c) {
    const p = this.params
    const rng = this.rng
    if (this.slotSite[slot] > 0) {
      // a cold page load fetches one page template's bundle of site assets
      const j = p.siteAssetsPerLoad - this.slotSite[slot]--
      const o = this.slotTemplate[slot] * p.siteAssetsPerLoad + j
      this.hotSeen[c] |= 1 << o
      this.siteTouched[o] = 1
      return o
    }
    if (rng.random() < p.oneTimeShare) return this.nextOneTime++
    let o = 0
    // an object already in the browser's HTTP cache would not reach the origin's log: draw again
    for (let tries = 0; tries < 8; tries++) {
      o = this.catalogBase + this.zipf.sample(rng)
      if (o >= HOT || (this.hotSeen[c] & (1 << o)) === 0) break
    }
    if (o < HOT) this.hotSeen[c] |= 1 << o
    this.touched[o - this.catalogBase] = 1
    return o
  }

  /** @param {number} i */
  siftUp (i) {
    const key = this.heapKey
    const slot = this.heapSlot
    const k = key[i]
    const s = slot[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (key[parent] <= k) break
      key[i] = key[parent]
      slot[i] = slot[parent]
      i = parent
    }
    key[i] = k
    slot[i] = s
  }

  /** @param {number} i */
  siftDown (i) {
    const key = this.heapKey
    const slot = this.heapSlot
    const n = this.heapN
    const k = key[i]
    const s = slot[i]
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      if (child + 1 < n && key[child + 1] < key[child]) child++
      if (key[child] >= k) break
      key[i] = key[child]
      slot[i] = slot[child]
      i = child
    }
    key[i] = k
    slot[i] = s
  }

  growHeap () {
    const key = new Float64Array(this.heapKey.length * 2)
    const slot = new Int32Array(this.heapSlot.length * 2)
    key.set(this.heapKey)
    slot.set(this.heapSlot)
    this.heapKey = key
    this.heapSlot = slot
  }

  growSlots () {
    const n = this.slotClient.length * 2
    for (const name of /** @type {const} */ (['slotClient', 'slotLeft', 'slotSite', 'slotTemplate', 'slotPageLeft'])) {
      const next = new Int32Array(n)
      next.set(this[name])
      this[name] = next
    }
  }

  /** @returns {Record<string, unknown>} what the run report says about the input */
  summary () {
    let touched = 0
    for (let i = 0; i < this.catalog; i++) touched += this.touched[i]
    const oneTime = this.nextOneTime - this.oneTimeBase
    const site = this.siteTouched.reduce((a, b) => a + b, 0)
    return {
      kind: 'synthetic',
      generator: 'etsy',
      params: this.params,
      requests: this.generated + this.pages,
      assetRequests: this.generated,
      pageRequests: this.pages,
      clients: this.nextClient,
      objects: site + touched + oneTime,
      catalog: this.catalog,
      catalogObjectsRequested: touched,
      oneTimeObjects: oneTime
    }
  }
}
