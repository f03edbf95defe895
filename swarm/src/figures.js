/**
 * What a crowd run measured, as the figures the simulator also gives: of the
 * slice's counted bytes (every byte its log requests fetch), the share that
 * did not come from the origin (savings, by the origin's own counter), the
 * shares that came from peers and from the visitor's own store (as each
 * visitor's loads ended), lookups and their hit rate (the coordinator's
 * counters), and page-load percentiles. And the same figures of the
 * simulator replaying the same slice, and the check that binds the two.
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../sim/src/config.js'
import { runSimulation } from '../../sim/src/run/run.js'
import { toCsv } from './slice.js'

/** points (of counted bytes) within which the crowd and the simulator must agree on savings and shares */
export const AGREE_POINTS = 3
/** relative difference within which they must agree on lookups */
export const AGREE_LOOKUPS = 0.05
/** points within which two runs of the crowd must agree, or the check is inconclusive */
export const REPEAT_POINTS = 1.5

/**
 * @typedef {object} Figures
 * @property {number} countedBytes
 * @property {number} originBytes bytes of the log's resources the origin sent
 * @property {number} savings share of counted bytes not sent by the origin
 * @property {number} peerShare
 * @property {number} storeShare
 * @property {number} lookups
 * @property {number} lookupHits
 */

/**
 * @param {number[]} xs
 * @param {number} q 0–1
 * @returns {number} nearest-rank percentile (NaN when empty)
 */
export function percentile (xs, q) {
  if (!xs.length) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/**
 * @param {import('./slice.js').Slice} slice
 * @param {import('./crowd.js').CrowdResult} run
 * @returns {Figures & { maygh: number, netSavings: number, wastedOrigin: number, markup: number, failed: number, setups: number, errors: Record<string, number>, p50: number, p95: number, dashboard: Dashboard }}
 */
export function crowdFigures (slice, run) {
  const by = run.origin.byKind
  // The replay's own markup beyond the HTML sizes the log gives (a page the log shows no HTML for
  // still needs one in a browser) is not the log's: counted apart, and kept out of the comparison.
  const markup = Math.max(0, by.view.bytes - run.viewBytes)
  const originBytes = by.view.bytes - markup + by.asset.bytes + by.media.bytes + by.other.bytes
  const counted = slice.totals.bytes
  let peer = 0
  let store = 0
  let fromOrigin = 0
  let failed = 0
  let setups = 0
  /** @type {Record<string, number>} */
  const errors = {}
  for (const v of run.views) {
    for (const [code, n] of Object.entries(v.errors)) errors[code] = (errors[code] ?? 0) + n
    peer += v.bytes.peer
    store += v.bytes.cache
    fromOrigin += v.bytes.origin
    failed += v.failed
    setups += v.setups
  }
  const ms = run.views.map((v) => v.ms)
  return {
    countedBytes: counted,
    originBytes,
    savings: 1 - originBytes / counted,
    peerShare: peer / counted,
    storeShare: store / counted,
    lookups: run.coordinator.lookups,
    lookupHits: run.coordinator.lookupHits,
    maygh: by.maygh.bytes,
    // what the site saves once maygh's own files (the script, the worker, the manifest) are paid for
    netSavings: 1 - (originBytes + by.maygh.bytes) / counted,
    // origin bytes of assets beyond what visitors took from it: hedge races the peers won, cut short
    // asset bytes the origin sent beyond what pages took from it: downloads the hedge cut short
    wastedOrigin: Math.max(0, by.asset.bytes + by.media.bytes + by.other.bytes - fromOrigin),
    markup,
    failed,
    setups,
    errors,
    p50: percentile(ms, 0.5),
    p95: percentile(ms, 0.95),
    dashboard: dashboard(slice, run)
  }
}

/**
 * @typedef {object} Dashboard what the coordinator tells the site (its visitors' own reports) against the origin's counter
 * @property {number} share of the asset bytes pages loaded through maygh, the share not from the origin, as the coordinator's `/stats` says
 * @property {number} truth the same share by the origin's counter: 1 − the asset bytes it sent (hedge losers cut short included) / the asset bytes the pages loaded
 * @property {number} originReported asset bytes the pages reported they got from the origin
 * @property {number} originCounted asset bytes (media included) the origin counted
 */

/**
 * @param {import('./slice.js').Slice} slice
 * @param {import('./crowd.js').CrowdResult} run
 * @returns {Dashboard}
 */
function dashboard (slice, run) {
  let loaded = 0
  // Audio and video too: the worker answers their Range requests since issue 26.
  for (const v of slice.views) for (const a of v.assets) loaded += a.bytes
  const site = /** @type {Record<string, number> | undefined} */ (run.usage && Object.values(run.usage)[0])
  const reported = site ? site.peer + site.origin + site.cache : 0
  const originCounted = run.origin.byKind.asset.bytes + run.origin.byKind.media.bytes
  return {
    share: site && reported ? (site.peer + site.cache) / reported : NaN,
    truth: loaded ? 1 - originCounted / loaded : NaN,
    originReported: site?.origin ?? 0,
    originCounted
  }
}

/**
 * The simulator's figures for the same slice (written as the CSV it reads).
 * @param {import('./slice.js').Slice} slice
 * @param {Partial<import('../../sim/src/config.js').SimConfig>} overrides the crowd's settings in the simulator's terms
 * @returns {Promise<Figures & { oracleSavings: number, result: import('../../sim/src/engine/engine-result.js').EngineResult }>}
 */
export async function simFigures (slice, overrides) {
  const dir = mkdtempSync(join(tmpdir(), 'maygh-swarm-'))
  try {
    const trace = join(dir, 'slice.csv')
    writeFileSync(trace, toCsv(slice))
    const run = await runSimulation({ trace, format: 'csv' }, resolveConfig({ pluginAdoption: 0, ...overrides }), { plugin: false })
    const r = run.maygh
    return {
      countedBytes: r.bytes,
      originBytes: r.originBytes,
      savings: r.savings,
      peerShare: r.peerBytes / r.bytes,
      storeShare: r.cacheBytes / r.bytes,
      lookups: r.coordinator.lookups,
      lookupHits: r.coordinator.lookupHits,
      // what transparent mode could serve at best: any listed online holder, no races, no failures
      oracleSavings: r.oracleSavings,
      result: r
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The check that binds the crowd and the simulator.
 * @param {Figures[]} crowd one or more runs of the crowd on the slice
 * @param {Figures} sim
 * @returns {{ verdict: 'agree' | 'disagree' | 'inconclusive', spread: number, rows: { figure: string, crowd: number, sim: number, diff: number, within: boolean }[] }}
 */
export function bind (crowd, sim) {
  const mean = (/** @type {(f: Figures) => number} */ f) => crowd.reduce((s, c) => s + f(c), 0) / crowd.length
  const spread = crowd.length > 1 ? 100 * Math.max(...crowd.map((c) => c.savings)) - 100 * Math.min(...crowd.map((c) => c.savings)) : 0
  const rows = [
    ...(/** @type {const} */ (['savings', 'peerShare', 'storeShare'])).map((k) => {
      const c = 100 * mean((f) => f[k])
      const s = 100 * sim[k]
      return { figure: k, crowd: c, sim: s, diff: c - s, within: Math.abs(c - s) <= AGREE_POINTS }
    }),
    (() => {
      const c = mean((f) => f.lookups)
      return { figure: 'lookups', crowd: c, sim: sim.lookups, diff: c - sim.lookups, within: Math.abs(c - sim.lookups) <= AGREE_LOOKUPS * Math.max(c, sim.lookups) }
    })()
  ]
  const verdict = spread > REPEAT_POINTS ? 'inconclusive' : rows.every((r) => r.within) ? 'agree' : 'disagree'
  return { verdict, spread, rows }
}
