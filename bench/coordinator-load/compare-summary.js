/**
 * bench:compare's figures from the load generator's runs: each figure's
 * min / median / max over a server's runs (failed runs left out and listed),
 * ratios taken within each round and then summarised over the rounds (so that
 * a machine that slows down weighs on both sides of a ratio alike), and a
 * target as its median ratio, the bound and whether it is met.
 */
import { median } from '../stats.js'

/** Figures of a run summarised over a server's runs. */
export const FIGURES = /** @type {const} */ (['tpsPerCoreS', 'tps', 'p50Ms', 'p99Ms'])
/** A server's own view of its loop in a run (loop-stats.js), summarised where the server gives it. */
const LOOP_FIGURES = /** @type {const} */ (['serverLoopLagP99Ms', 'serverLoopLagMaxMs', 'serverGcS'])

/**
 * One run's JSON line from coordinator-load.js (the fields read here).
 * @typedef {object} Figures
 * @property {number | null} tpsPerCoreS
 * @property {number} tps
 * @property {number} p50Ms
 * @property {number} p99Ms
 * @property {number} transactions
 * @property {number} errors
 * @property {Record<string, number>} [errorCodes]
 * @property {number} [behind] with --rate: transactions due that found no idle client
 * @property {number | null} bytesPerClient
 * @property {number | null} redisBytesPerClient
 * @property {number} [serverLoopLagP99Ms] the coordinator's and the bare server's (loop-stats.js)
 * @property {number} [serverLoopLagMaxMs]
 * @property {number} [serverGcS]
 */

/**
 * One run of one server: its figures, or why it has none (the server did not
 * start or ended, the load generator failed or timed out).
 * @typedef {{ round: number, figures: Figures | null, failure: string | null }} Run
 */

/** @typedef {{ min: number, median: number, max: number }} Spread */

/**
 * @param {number} value
 * @param {number} [digits]
 * @returns {number}
 */
export function round (value, digits = 2) {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

/**
 * @param {(number | null | undefined)[]} values null or undefined where a run did not measure the figure
 * @returns {Spread | null} over the finite values; null when there are none
 */
export function spread (values) {
  const sorted = /** @type {number[]} */ (values.filter((v) => typeof v === 'number' && Number.isFinite(v))).sort((a, b) => a - b)
  if (sorted.length === 0) return null
  return { min: sorted[0], median: round(median(sorted)), max: sorted[sorted.length - 1] }
}

/**
 * @param {Run[]} runs one server's
 * @returns {object} each figure's spread, the transactions and failed transactions (by code) of all its runs,
 *   and the runs that failed as a whole
 */
export function summariseRuns (runs) {
  const measured = /** @type {Figures[]} */ (runs.map((r) => r.figures).filter((f) => f !== null))
  /** @type {Record<string, number>} */
  const errorCodes = {}
  for (const f of measured) for (const [code, n] of Object.entries(f.errorCodes ?? {})) errorCodes[code] = (errorCodes[code] ?? 0) + n
  const errors = measured.reduce((n, f) => n + f.errors, 0)
  const failed = runs.filter((r) => r.figures === null).map((r) => ({ round: r.round, error: r.failure }))
  const behind = measured.some((f) => f.behind !== undefined) ? measured.reduce((n, f) => n + (f.behind ?? 0), 0) : undefined
  return {
    runs: runs.length,
    ...Object.fromEntries(FIGURES.map((name) => [name, spread(measured.map((f) => f[name]))])),
    ...Object.fromEntries(LOOP_FIGURES.flatMap((name) => {
      const s = spread(measured.map((f) => f[name]))
      return s === null ? [] : [[name, s]]
    })),
    transactions: measured.reduce((n, f) => n + f.transactions, 0),
    errors,
    ...(errors > 0 ? { errorCodes } : {}),
    ...(behind === undefined ? {} : { behind }),
    ...(failed.length > 0 ? { failedRuns: failed } : {})
  }
}

/**
 * @param {Run[]} ours
 * @param {Run[]} others
 * @param {typeof FIGURES[number]} figure
 * @returns {(number | null)[]} per round, ours over the other's (null where either has no figure)
 */
export function roundRatios (ours, others, figure) {
  return ours.map((a) => {
    const b = others.find((r) => r.round === a.round)
    const x = a.figures?.[figure]
    const y = b?.figures?.[figure]
    return typeof x === 'number' && typeof y === 'number' && y > 0 ? round(x / y) : null
  })
}

/**
 * @param {number | null | undefined} ratio the measured median ratio; null when not measured
 * @param {{ atLeast: number } | { atMost: number }} bound
 * @returns {{ ratio: number | null, atLeast?: number, atMost?: number, met: boolean | null }} met is null when not measured
 */
export function target (ratio, bound) {
  if (ratio === null || ratio === undefined) return { ratio: null, ...bound, met: null }
  const met = 'atLeast' in bound ? ratio >= bound.atLeast : ratio <= bound.atMost
  return { ratio, ...bound, met }
}
