// The synthetic Etsy-like generator: deterministic for a seed, and its statistics match its parameters.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { FLAG_ASSET, FLAG_BLOCKING, FLAG_PAGE } from '../src/batch.js'
import { ETSY_DEFAULTS } from '../src/synthetic/etsy-params.js'
import { EtsyGenerator } from '../src/synthetic/synthetic-etsy.js'

/**
 * @param {object} params
 * @returns {{ ts: Float64Array, client: Int32Array, object: Int32Array, bytes: Float64Array, flags: Uint8Array, n: number, gen: EtsyGenerator }}
 */
function generate (params) {
  const gen = new EtsyGenerator(params)
  const parts = []
  for (const b of gen.batches()) {
    parts.push({ ts: b.ts.slice(0, b.n), client: b.client.slice(0, b.n), object: b.object.slice(0, b.n), bytes: b.bytes.slice(0, b.n), flags: b.flags.slice(0, b.n) })
  }
  const n = parts.reduce((a, p) => a + p.ts.length, 0)
  const out = { ts: new Float64Array(n), client: new Int32Array(n), object: new Int32Array(n), bytes: new Float64Array(n), flags: new Uint8Array(n), n, gen }
  let at = 0
  for (const p of parts) {
    out.ts.set(p.ts, at)
    out.client.set(p.client, at)
    out.object.set(p.object, at)
    out.bytes.set(p.bytes, at)
    out.flags.set(p.flags, at)
    at += p.ts.length
  }
  return out
}

/** @param {ReturnType<typeof generate>} g */
function digest (g) {
  const h = createHash('sha256')
  for (const a of [g.ts, g.client, g.object, g.bytes, g.flags]) h.update(new Uint8Array(a.buffer))
  return h.digest('hex')
}

/** @param {ReturnType<typeof generate>} g @param {number} i @returns {boolean} whether request i is an asset's (not a page's) */
const isAsset = (g, i) => (g.flags[i] & FLAG_ASSET) !== 0

const N = 300_000
const week = generate({ requests: N, seed: 42 })

test('the same seed gives the same trace; another seed another', () => {
  const again = generate({ requests: N, seed: 42 })
  assert.equal(digest(again), digest(week))
  const other = generate({ requests: N, seed: 43 })
  assert.notEqual(digest(other), digest(week))
})

test('requests come in time order over the whole week, about as many assets as asked for, and page requests', () => {
  let assets = 0
  let pages = 0
  for (let i = 0; i < week.n; i++) {
    if (isAsset(week, i)) assets++
    else if (week.flags[i] === FLAG_PAGE && week.bytes[i] === ETSY_DEFAULTS.pageBytes) pages++
    else assert.fail(`request ${i} is neither an asset nor a page: flags ${week.flags[i]}`)
  }
  assert.ok(Math.abs(assets - N) / N < 0.03, `${assets} asset requests`)
  // a page view holds 2–6 assets, fewer at a session's end: a little under 4 on average
  assert.ok(assets / pages > 3.2 && assets / pages < 4, `${assets / pages} assets per page view`)
  assert.equal(week.gen.summary().pageRequests, pages)
  const p = ETSY_DEFAULTS
  for (let i = 1; i < week.n; i++) if (week.ts[i] < week.ts[i - 1]) assert.fail(`out of order at ${i}`)
  assert.ok(week.ts[0] >= p.start && week.ts[week.n - 1] < p.start + 7 * 86400)
  assert.ok(week.ts[week.n - 1] > p.start + 6.9 * 86400)
})

test('the site-wide assets (style and script bundles) block rendering; photos do not', () => {
  let site = 0
  for (let i = 0; i < week.n; i++) {
    if (!isAsset(week, i)) continue
    const isSite = week.object[i] < ETSY_DEFAULTS.siteAssets
    if (isSite) site++
    assert.equal((week.flags[i] & FLAG_BLOCKING) !== 0, isSite, `request ${i} for object ${week.object[i]}: flags ${week.flags[i]}`)
  }
  assert.ok(site > 1000, `${site} site-asset requests`)
})

test('catalog popularity is Zipf with the configured alpha', () => {
  const p = ETSY_DEFAULTS
  const counts = new Float64Array(2000)
  for (let i = 0; i < week.n; i++) {
    const rank = week.object[i] - p.siteAssets
    if (rank >= 0 && rank < 2000) counts[rank]++
  }
  // least-squares slope of log(count) on log(rank) over ranks 30–400 (the top ranks are flattened
  // because a browser that has an object in its HTTP cache does not ask the origin again)
  let sx = 0; let sy = 0; let sxx = 0; let sxy = 0; let m = 0
  for (let r = 30; r < 400; r++) {
    if (counts[r] === 0) continue
    const x = Math.log(r + 1)
    const y = Math.log(counts[r])
    sx += x; sy += y; sxx += x * x; sxy += x * y; m++
  }
  const slope = (m * sxy - sx * sy) / (m * sxx - sx * sx)
  assert.ok(Math.abs(-slope - p.alpha) < 0.12, `alpha estimate ${-slope}`)
})

test('a long tail: most objects are requested once', () => {
  const counts = new Map()
  for (let i = 0; i < week.n; i++) counts.set(week.object[i], (counts.get(week.object[i]) ?? 0) + 1)
  const once = [...counts.values()].filter((c) => c === 1).length / counts.size
  assert.ok(once > 0.55 && once < 0.9, `once-requested share ${once}`)
})

test('sizes: lognormal body around the median, heavy tail, capped', () => {
  const p = ETSY_DEFAULTS
  /** @type {Map<number, number>} */
  const size = new Map()
  for (let i = 0; i < week.n; i++) if (isAsset(week, i) && week.object[i] >= p.siteAssets) size.set(week.object[i], week.bytes[i])
  const sizes = Float64Array.from(size.values()).sort()
  const median = sizes[sizes.length >> 1]
  assert.ok(Math.abs(median / p.sizeMedian - 1) < 0.1, `median ${median}`)
  const tail = sizes.filter((s) => s >= p.tailMin).length / sizes.length
  // lognormal alone puts ~0.7% above 100 kB (z = ln(100/12)); the Pareto tail adds ~2%
  assert.ok(tail > 0.02 && tail < 0.045, `share at or above tailMin ${tail}`)
  assert.ok(sizes[sizes.length - 1] <= p.sizeMax)
  // an object's size is the same in every request for it
  for (let i = 0; i < week.n; i++) if (isAsset(week, i) && week.object[i] >= p.siteAssets) assert.equal(week.bytes[i], size.get(week.object[i]))
})

test('sessions: bursts of 6–16 assets in page views, return visits, a few heavy clients', () => {
  const p = ETSY_DEFAULTS
  /** @type {Map<number, number[]>} requests by client */
  const byClient = new Map()
  let assets = 0
  for (let i = 0; i < week.n; i++) {
    const c = week.client[i]
    let at = byClient.get(c)
    if (at === undefined) byClient.set(c, (at = []))
    at.push(i)
    if (isAsset(week, i)) assets++
  }
  const lengths = []
  /** gaps before an asset (from its page or the page's previous asset), and before a page (from the last asset) */
  const assetGaps = []
  const pageGaps = []
  let returning = 0
  let heavy = 0
  /** page requests the client's next request does not follow with an asset (only where two of its sessions overlap) */
  let pagesAlone = 0
  let pages = 0
  for (const [c, at] of byClient) {
    if (c < p.heavyClients) {
      heavy += at.filter((i) => isAsset(week, i)).length
      continue
    }
    let len = 0
    let sessions = 1
    for (let k = 0; k < at.length; k++) {
      const i = at[k]
      const gap = k === 0 ? Infinity : week.ts[i] - week.ts[at[k - 1]]
      if (gap > 1800 && k > 0) {
        lengths.push(len)
        len = 0
        sessions++
      } else if (k > 0) {
        (isAsset(week, i) ? assetGaps : pageGaps).push(gap)
      }
      if (isAsset(week, i)) len++
      else if (k === at.length - 1 || !isAsset(week, at[k + 1])) pagesAlone++
    }
    lengths.push(len)
    pages += at.length - at.filter((i) => isAsset(week, i)).length
    if (sessions > 1) returning++
  }
  assert.ok(pagesAlone < pages * 0.01, `${pagesAlone} of ${pages} page requests without their assets next`)
  const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length
  // sessions that overlap one another merge, so the mean sits a little above (6+16)/2
  assert.ok(mean > 10.5 && mean < 12.5, `mean session length ${mean}`)
  const median = (/** @type {number[]} */ xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
  // overlapping sessions of one client (a returning visitor, back within minutes) blur the medians a little
  assert.ok(Math.abs(median(assetGaps) / p.assetGapMedian - 1) < 0.15, `median gap within a page view ${median(assetGaps)}`)
  assert.ok(Math.abs(median(pageGaps) / p.pageGapMedian - 1) < 0.15, `median gap between page views ${median(pageGaps)}`)
  assert.ok(returning / byClient.size > 0.1, `returning clients ${returning / byClient.size}`)
  const heavyShare = heavy / assets
  assert.ok(heavyShare > 0.06 && heavyShare < 0.13, `heavy clients' share ${heavyShare}`)
})

test('a daily and a weekly cycle', () => {
  const p = ETSY_DEFAULTS
  const byHour = new Float64Array(24)
  const byDay = new Float64Array(7)
  for (let i = 0; i < week.n; i++) {
    const local = week.ts[i] + p.utcOffset * 3600
    byHour[Math.floor((local % 86400) / 3600)]++
    byDay[Math.floor(((local / 86400) + 4) % 7)]++ // 0 = Sunday
  }
  const ratio = byHour[p.peakHour] / byHour[(p.peakHour + 12) % 24]
  const expected = (1 + p.dailyAmplitude) / (1 - p.dailyAmplitude)
  assert.ok(Math.abs(ratio / expected - 1) < 0.2, `peak/trough ${ratio}, expected ${expected}`)
  // Sunday (peak) against Wednesday/Thursday (trough)
  assert.ok(byDay[0] / ((byDay[3] + byDay[4]) / 2) > 1.1, `weekly ratio ${byDay[0] / ((byDay[3] + byDay[4]) / 2)}`)
})

test('bad generator parameters are coded errors', () => {
  assert.throws(() => new EtsyGenerator({ alpha: -1 }), { code: 'MGH_SIM_ERR_BAD_VALUE' })
  assert.throws(() => new EtsyGenerator({ sessionMin: 9, sessionMax: 3 }), { code: 'MGH_SIM_ERR_BAD_VALUE' })
  assert.throws(() => new EtsyGenerator({ days: 0 }), { code: 'MGH_SIM_ERR_BAD_VALUE' })
  assert.throws(() => new EtsyGenerator(/** @type {any} */ ({ nope: 1 })), { code: 'MGH_SIM_ERR_BAD_VALUE' })
})
