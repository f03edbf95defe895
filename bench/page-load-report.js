/**
 * The page-load benchmark's figures (bench/page-load.js): one scenario's
 * visits summed up against the targets issue 23 set, and the tables printed.
 */

import { percentile, ratioInterval } from './stats.js'

/** @typedef {'first' | 'newcomer' | 'holders' | 'down' | 'silent' | 'liar'} Scenario */

/**
 * Issue 23's targets, p95 against the origin-only visits made alongside: the
 * first visitor's viewport, all images and LCP within 1.02× (also with
 * holders online, on its very first page of the site); with holders
 * online the viewport at 0.7×, LCP no later, at least 95% of the image bytes
 * not from the origin (counted there) and at most 5% of what holders upload
 * thrown away; the coordinator down, or a silent or never-connecting holder
 * among them, within 1.02×.
 */
export const TARGETS = Object.freeze({
  viewport: { first: 1.02, newcomer: 1.02, holders: 0.7, down: 1.02, silent: 1.02, liar: 1.02 },
  /** @type {Partial<Record<Scenario, number>>} */
  all: { first: 1.02, newcomer: 1.02 },
  lcp: { first: 1.02, newcomer: 1.02, holders: 1.0, down: 1.02, silent: 1.02, liar: 1.02 },
  holdersSaved: 0.95,
  holdersWasted: 0.05
})

/** The nearest-rank percentile (bench/stats.js) in whole ms. @param {number[]} xs @param {number} q in (0, 1] */
const percentileMs = (xs, q) => Math.round(percentile(xs, q))
const ratio = (/** @type {number} */ a, /** @type {number} */ b) => Math.round(a / b * 100) / 100

/**
 * @typedef {{ viewportMs: number, allMs: number, lcpMs: number | null, stats: any, steps?: Record<string, number> | null, originImageBytes: number, servedBytes: number }} Run
 *   `stats`: the visitor's `Maygh.stats()` (null in an origin-only visit); `servedBytes`: what the answering holders served meanwhile
 * @typedef {{ maygh: Run[], none: Run[] }} Runs
 */

/**
 * One of the visits' times, over the visits that have it (LCP: those whose engine reported one).
 * @param {Run[]} rs
 * @param {'viewportMs' | 'allMs' | 'lcpMs'} time
 */
const timesOf = (rs, time) => /** @type {number[]} */ (rs.map((r) => r[time]).filter((ms) => ms !== null))

/** @param {number} x @param {number} [places] */
const round = (x, places = 3) => Math.round(x * 10 ** places) / 10 ** places

/**
 * @param {Runs} runs
 * @param {Scenario} scenario
 * @param {number} shopImageBytes the shop's image bytes, from the manifest
 */
export function summarize (runs, scenario, shopImageBytes) {
  /** @param {Run[]} rs */
  const figures = (rs) => {
    const lcps = timesOf(rs, 'lcpMs')
    return {
      viewportP50: percentileMs(rs.map((r) => r.viewportMs), 0.5),
      viewportP95: percentileMs(rs.map((r) => r.viewportMs), 0.95),
      allP50: percentileMs(rs.map((r) => r.allMs), 0.5),
      allP95: percentileMs(rs.map((r) => r.allMs), 0.95),
      // Over the visits whose engine reported one; null when none did.
      lcpP50: lcps.length ? percentileMs(lcps, 0.5) : null,
      lcpP95: lcps.length ? percentileMs(lcps, 0.95) : null,
      lcpVisits: lcps.length,
      originImageBytesPerVisit: Math.round(rs.reduce((n, r) => n + r.originImageBytes, 0) / rs.length)
    }
  }
  const maygh = figures(runs.maygh)
  const none = figures(runs.none)
  const sum = (/** @type {(r: Run) => number} */ f) => runs.maygh.reduce((n, r) => n + f(r), 0)
  const peerBytes = sum((r) => r.stats.peer.bytes)
  const clientOriginBytes = sum((r) => r.stats.origin.bytes)
  // Counted at the origin: what it sent for the shop's images against what the shop's images weigh.
  const originShare = sum((r) => r.originImageBytes) / (runs.maygh.length * shopImageBytes)
  const servedBytes = sum((r) => r.servedBytes)
  const wastedBytes = sum((r) => Math.max(0, r.servedBytes - r.stats.peer.bytes))
  const wastedShare = servedBytes > 0 ? wastedBytes / servedBytes : null
  const viewportRatio = ratio(maygh.viewportP95, none.viewportP95)
  const lcpRatio = maygh.lcpP95 !== null && none.lcpP95 !== null ? ratio(maygh.lcpP95, none.lcpP95) : null
  const peerOrStoreShare = Math.max(0, 1 - originShare)
  const withHolders = scenario === 'holders'
  const allRatio = ratio(maygh.allP95, none.allP95)
  const targets = {
    viewport: TARGETS.viewport[scenario],
    all: TARGETS.all[scenario] ?? null,
    lcp: TARGETS.lcp[scenario],
    peerOrStoreShare: withHolders ? TARGETS.holdersSaved : null,
    wastedShare: withHolders ? TARGETS.holdersWasted : null
  }
  /** @type {Record<keyof typeof targets, boolean | null>} null: no target, or nothing measured (LCP n/a, nothing served) */
  const met = {
    viewport: viewportRatio <= targets.viewport,
    all: targets.all === null ? null : allRatio <= targets.all,
    lcp: lcpRatio === null ? null : lcpRatio <= targets.lcp,
    peerOrStoreShare: targets.peerOrStoreShare === null ? null : peerOrStoreShare >= targets.peerOrStoreShare,
    wastedShare: targets.wastedShare === null || wastedShare === null ? null : wastedShare <= targets.wastedShare
  }
  return {
    maygh,
    none,
    viewportRatio,
    allRatio,
    lcpRatio,
    shopImageBytes,
    originShare: round(originShare),
    peerOrStoreShare: round(peerOrStoreShare),
    // what the visitors' own stats say, beside the origin's count
    peerShare: peerBytes + clientOriginBytes > 0 ? round(peerBytes / (peerBytes + clientOriginBytes)) : 0,
    servedBytes,
    wastedBytes,
    wastedShare: wastedShare === null ? null : round(wastedShare),
    errors: sum((r) => Object.values(/** @type {Record<string, number>} */ (r.stats.errors)).reduce((a, b) => a + b, 0)),
    targets,
    met: Object.values(met).every((m) => m !== false),
    missed: Object.entries(met).filter(([, m]) => m === false).map(([k]) => k)
  }
}

/** The figures an A/B (`--base`) compares, each a p50 and a p95 of one of a visit's times. */
const COMPARED = /** @type {const} */ ({
  viewportP50: ['viewportMs', 0.5],
  viewportP95: ['viewportMs', 0.95],
  allP50: ['allMs', 0.5],
  allP95: ['allMs', 0.95],
  lcpP50: ['lcpMs', 0.5],
  lcpP95: ['lcpMs', 0.95]
})
/** @typedef {keyof typeof COMPARED} Compared */

/**
 * This tree's maygh visits against another's (`--base`), made alternately in
 * one run: each figure's ratio, this tree's over the other's (below 1: this
 * tree's is sooner), with the 90% interval the ratio falls in by chance alone
 * (bench/stats.js ratioInterval, over the two sides' visits); and the share of
 * image bytes each saved the origin.
 * @param {ReturnType<typeof summarize>} ours
 * @param {ReturnType<typeof summarize>} base
 * @param {{ ours: Run[], base: Run[] }} visits each side's maygh visits
 */
export function abRatios (ours, base, visits) {
  const out = /** @type {Record<Compared, number | null>} */ ({})
  const intervals = /** @type {Record<Compared, [number, number] | null>} */ ({})
  for (const [k, [time, q]] of /** @type {[Compared, typeof COMPARED[Compared]][]} */ (Object.entries(COMPARED))) {
    const a = ours.maygh[k]
    const b = base.maygh[k]
    out[k] = a === null || b === null ? null : ratio(a, b)
    const [low, high] = ratioInterval(timesOf(visits.ours, time), timesOf(visits.base, time), (xs) => percentile(xs, q))
    intervals[k] = out[k] === null ? null : [round(low, 2), round(high, 2)]
  }
  return { ...out, intervals, peerOrStoreShare: ours.peerOrStoreShare, basePeerOrStoreShare: base.peerOrStoreShare }
}

/**
 * @param {{ engine: string, visits: number, profile: { rttMs: number, mbps: number } }} run
 * @param {Record<string, ReturnType<typeof summarize> & { base?: ReturnType<typeof summarize>, ab?: ReturnType<typeof abRatios> }>} results
 */
export function printTable ({ engine, visits, profile }, results) {
  const na = (/** @type {number | null} */ x) => x === null ? 'n/a' : String(x)
  const pair = (/** @type {number | null} */ a, /** @type {number | null} */ b) => `${na(a)} / ${na(b)}`.padEnd(17)
  console.log(`\n${engine}, origin +${profile.rttMs} ms RTT, ${profile.mbps} Mbit/s per response; ${visits} maygh and ${visits} origin-only visits per row; ms, p50 / p95; ratios of p95`)
  console.log('mode/scenario          viewport maygh   viewport origin  ratio  all maygh        all origin       ratio  LCP maygh        LCP origin       ratio')
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(23)}${pair(r.maygh.viewportP50, r.maygh.viewportP95)}${pair(r.none.viewportP50, r.none.viewportP95)}${String(r.viewportRatio).padEnd(7)}` +
      `${pair(r.maygh.allP50, r.maygh.allP95)}${pair(r.none.allP50, r.none.allP95)}${String(r.allRatio).padEnd(7)}` +
      `${pair(r.maygh.lcpP50, r.maygh.lcpP95)}${pair(r.none.lcpP50, r.none.lcpP95)}${na(r.lcpRatio)}`)
  }
  const kb = (/** @type {number} */ n) => `${Math.round(n / 1024)} KiB`
  console.log('\nimage bytes the origin sent per visit (counted at the origin) against the shop\'s; peer share: what clients report; wasted: holders\' uploads thrown away')
  console.log('mode/scenario          origin maygh / origin-only / shop   peer or store  peer share  wasted / served       targets')
  for (const [name, r] of Object.entries(results)) {
    const t = r.targets
    const goals = [`viewport ≤ ${t.viewport}`, ...t.all === null ? [] : [`all ≤ ${t.all}`], `LCP ≤ ${t.lcp}${r.lcpRatio === null ? ' (n/a)' : ''}`]
    if (t.peerOrStoreShare !== null) goals.push(`saved ≥ ${t.peerOrStoreShare}`)
    if (t.wastedShare !== null) goals.push(`wasted ≤ ${t.wastedShare}${r.wastedShare === null ? ' (n/a)' : ''}`)
    const verdict = r.met ? 'met' : `MISSED ${r.missed.join(', ')}`
    const wasted = `${na(r.wastedShare)} (${kb(r.wastedBytes)} / ${kb(r.servedBytes)})`
    console.log(`${name.padEnd(23)}${`${kb(r.maygh.originImageBytesPerVisit)} / ${kb(r.none.originImageBytesPerVisit)} / ${kb(r.shopImageBytes)}`.padEnd(36)}` +
      `${String(r.peerOrStoreShare).padEnd(15)}${String(r.peerShare).padEnd(12)}${wasted.padEnd(22)}${goals.join(', ')}: ${verdict}`)
  }
  if (!Object.values(results).some((r) => r.ab)) return
  console.log('\nA/B in one run (--base): this tree\'s maygh visits against the other checkout\'s, made alternately; ms, p50 / p95; ratios this tree / base (below 1: this tree sooner)')
  console.log('mode/scenario          viewport new     viewport base    ratios       all new          all base         ratios       LCP new          LCP base         ratios       peer or store new / base')
  for (const [name, r] of Object.entries(results)) {
    const { base, ab } = r
    if (!base || !ab) continue
    const two = (/** @type {number | null} */ a, /** @type {number | null} */ b) => `${na(a)} / ${na(b)}`.padEnd(13)
    console.log(`${name.padEnd(23)}${pair(r.maygh.viewportP50, r.maygh.viewportP95)}${pair(base.maygh.viewportP50, base.maygh.viewportP95)}${two(ab.viewportP50, ab.viewportP95)}` +
      `${pair(r.maygh.allP50, r.maygh.allP95)}${pair(base.maygh.allP50, base.maygh.allP95)}${two(ab.allP50, ab.allP95)}` +
      `${pair(r.maygh.lcpP50, r.maygh.lcpP95)}${pair(base.maygh.lcpP50, base.maygh.lcpP95)}${two(ab.lcpP50, ab.lcpP95)}${ab.peerOrStoreShare} / ${ab.basePeerOrStoreShare}`)
    const span = (/** @type {[number, number] | null} */ i) => i === null ? 'n/a' : `${i[0]}–${i[1]}`
    const { intervals: i } = ab
    console.log(`${''.padEnd(23)}90% intervals of chance alone (bootstrap of the visits): viewport ${span(i.viewportP50)} / ${span(i.viewportP95)}, all ${span(i.allP50)} / ${span(i.allP95)}, LCP ${span(i.lcpP50)} / ${span(i.lcpP95)}`)
  }
}
