/**
 * The medians and percentiles the benchmarks print, defined once. Each
 * function sorts a copy (its input is left as it was) and gives NaN for an
 * empty list; rounding for a printout stays with the bench that prints.
 *
 * - `median`: the middle value, the mean of the two middle ones for an even
 *   count. What a bench's "median" means unless it says otherwise.
 * - `percentile`: nearest rank, the definition of the p95s in the README
 *   (page-load.js, liars.js). `percentile(xs, 0.5)` is the lower median.
 * - `upperPercentile`: one rank above `percentile` where q·n is a whole
 *   number; `upperPercentile(xs, 0.5)` is the upper median. Kept for the
 *   benches whose figures in the README were printed with it (failover.js,
 *   redis-stall.js, client-peer-vs-origin.js, video-play.js,
 *   pieces-download.js).
 * - `ratioInterval`: how far a ratio of two samples' figures could move by
 *   chance alone (a percentile bootstrap): what an A/B's ratio is read with.
 */
import { Rng } from '../sim/src/rng.js'

/** @param {number[]} xs */
const sorted = (xs) => [...xs].sort((a, b) => a - b)

/**
 * @param {number[]} xs
 * @returns {number} the middle value; for an even count the mean of the two middle ones (NaN when empty)
 */
export function median (xs) {
  const s = sorted(xs)
  if (s.length === 0) return NaN
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/**
 * Nearest rank: the smallest value with at least q·n of the n values at or
 * below it, `sorted[ceil(q·n) − 1]` (the least value for q = 0).
 * @param {number[]} xs
 * @param {number} q in [0, 1]
 * @returns {number} NaN when empty
 */
export function percentile (xs, q) {
  const s = sorted(xs)
  if (s.length === 0) return NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
}

/**
 * The smallest value with more than q·n of the n values at or below it,
 * `sorted[floor(q·n)]` (the greatest value for q = 1).
 * @param {number[]} xs
 * @param {number} q in [0, 1]
 * @returns {number} NaN when empty
 */
export function upperPercentile (xs, q) {
  const s = sorted(xs)
  if (s.length === 0) return NaN
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

/**
 * The interval a ratio of two samples' figures, `stat(a) / stat(b)`, falls in
 * by chance alone, as a percentile bootstrap estimates it: each of `rounds`
 * rounds draws both samples again from themselves (with replacement) and
 * takes the ratio; the interval holds the middle `level` of those ratios. An
 * A/B whose interval holds 1 shows no difference its visits can tell from
 * chance. Seeded: the same samples give the same interval. A p95 of 20
 * visits is nearly their slowest one, so its interval is wide: honestly so.
 * @param {number[]} a
 * @param {number[]} b
 * @param {(xs: number[]) => number} stat e.g. `(xs) => percentile(xs, 0.95)`
 * @param {{ rounds?: number, level?: number, seed?: number }} [o]
 * @returns {[low: number, high: number]} NaN, NaN when either sample is empty
 */
export function ratioInterval (a, b, stat, { rounds = 2000, level = 0.9, seed = 1 } = {}) {
  if (!a.length || !b.length) return [NaN, NaN]
  const rng = new Rng(seed)
  /** @param {number[]} xs */
  const draw = (xs) => Array.from(xs, () => xs[rng.int(xs.length)])
  const ratios = Array.from({ length: rounds }, () => stat(draw(a)) / stat(draw(b)))
  return [percentile(ratios, (1 - level) / 2), percentile(ratios, (1 + level) / 2)]
}
