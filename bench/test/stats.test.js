/**
 * The benches' medians, percentiles and A/B intervals (bench/stats.js), and
 * the A/B figures bench/page-load.js prints from them (page-load-report.js).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { median, percentile, ratioInterval, upperPercentile } from '../stats.js'
import { abRatios, summarize } from '../page-load-report.js'

test('median, nearest-rank and upper-rank percentiles; the input is left as it was; NaN when empty', () => {
  const xs = [40, 10, 30, 20]
  assert.equal(median(xs), 25)
  assert.equal(median([3, 1, 2]), 2)
  assert.equal(percentile(xs, 0.5), 20, 'the lower median')
  assert.equal(upperPercentile(xs, 0.5), 30, 'the upper median')
  assert.equal(percentile(xs, 0.95), 40)
  assert.equal(percentile(xs, 0), 10)
  assert.equal(upperPercentile(xs, 1), 40)
  assert.deepEqual(xs, [40, 10, 30, 20])
  for (const f of [median, (/** @type {number[]} */ v) => percentile(v, 0.5), (/** @type {number[]} */ v) => upperPercentile(v, 0.5)]) assert.ok(Number.isNaN(f([])))
})

test('ratioInterval: holds the ratio when two samples differ, holds 1 when they are alike, the same for the same seed', () => {
  const a = [500, 520, 510, 530, 700, 505, 515, 525, 540, 560, 480, 490, 495, 610, 620, 505, 512, 518, 522, 530]
  const p50 = (/** @type {number[]} */ xs) => percentile(xs, 0.5)
  const slower = ratioInterval(a, a.map((x) => x * 1.25), p50)
  assert.ok(slower[0] <= 0.8 && slower[1] >= 0.8 && slower[1] < 1, `a quarter slower: ${slower}`)
  const alike = ratioInterval(a, [...a].reverse(), p50)
  assert.ok(alike[0] < 1 && alike[1] > 1, `the same visits: ${alike}`)
  assert.deepEqual(ratioInterval(a, [...a].reverse(), p50), alike)
  assert.notDeepEqual(ratioInterval(a, [...a].reverse(), p50, { seed: 2 }), alike)
  const p95 = ratioInterval(a, [...a].reverse(), (xs) => percentile(xs, 0.95))
  assert.ok(p95[1] - p95[0] > alike[1] - alike[0], 'a p95 of 20 visits is less sure than their median')
  assert.deepEqual(ratioInterval([], a, p50), [NaN, NaN])
})

test('an A/B reports each ratio with its interval; LCP over the visits that had one', () => {
  /** @param {number} ms @param {number | null} lcp */
  const run = (ms, lcp) => ({ viewportMs: ms, allMs: 2 * ms, lcpMs: lcp, stats: { peer: { bytes: 1 }, origin: { bytes: 0 }, errors: {} }, originImageBytes: 0, servedBytes: 1 })
  const ours = Array.from({ length: 20 }, (_, i) => run(400 + 10 * i, i % 2 ? 300 + i : null))
  const base = Array.from({ length: 20 }, (_, i) => run(500 + 12 * i, 330 + i))
  const none = base
  const a = summarize({ maygh: ours, none }, 'holders', 1)
  const b = summarize({ maygh: base, none }, 'holders', 1)
  const ab = abRatios(a, b, { ours, base })
  assert.equal(ab.viewportP50, Math.round(a.maygh.viewportP50 / b.maygh.viewportP50 * 100) / 100)
  const [low, high] = /** @type {[number, number]} */ (ab.intervals.viewportP50)
  assert.ok(low <= /** @type {number} */ (ab.viewportP50) && /** @type {number} */ (ab.viewportP50) <= high && high < 1, `viewport p50 ${ab.viewportP50} in ${low}–${high}`)
  assert.ok(ab.intervals.lcpP50 !== null && ab.intervals.lcpP50[1] < 1)
})
