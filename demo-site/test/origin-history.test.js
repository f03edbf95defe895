import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { createOriginHistory } from '../src/origin-history.js'
import { createOriginStats } from '../src/origin-stats.js'

/** A clock the test moves by hand, ms since the epoch. */
function fakeClock (start = Date.UTC(2026, 10, 30, 12, 0, 0)) {
  const clock = { t: start, now: () => clock.t }
  return clock
}
const sum = (/** @type {number[]} */ values) => values.reduce((a, b) => a + b, 0)

test('history: the last `seconds`, oldest first, ending at the second in progress, zeros where nothing was served', () => {
  const clock = fakeClock()
  const history = createOriginHistory({ seconds: 60, now: clock.now })
  const empty = history.series()
  assert.equal(empty.intervalMs, 1000)
  assert.equal(empty.end, clock.t)
  for (const key of /** @type {const} */ (['requests', 'bytes', 'assetBytes'])) assert.deepEqual(empty[key], new Array(60).fill(0), key)
  history.add(1000, true)
  clock.t += 400
  history.add(200, false) // the same second
  clock.t += 2600
  history.add(50, true)
  const s = history.series()
  assert.equal(s.end, clock.t, 'the start of the second in progress')
  assert.deepEqual(s.bytes.slice(-4), [1200, 0, 0, 50])
  assert.deepEqual(s.assetBytes.slice(-4), [1000, 0, 0, 50])
  assert.deepEqual(s.requests.slice(-4), [2, 0, 0, 1])
  assert.equal(s.bytes.length, 60)
})

test('history survives a quiet period, and forgets a second once it is older than the window', () => {
  const clock = fakeClock()
  const history = createOriginHistory({ seconds: 600, now: clock.now })
  history.add(5000, true)
  clock.t += 9 * 60_000 // nine quiet minutes: the dashboard opened now still shows the burst
  let s = history.series()
  assert.equal(s.bytes[600 - 1 - 540], 5000, 'nine minutes back')
  assert.equal(sum(s.bytes), 5000)
  clock.t += 60_000 // ten minutes: it has left the window, and its slot reads as zero
  s = history.series()
  assert.equal(sum(s.bytes), 0)
  assert.equal(sum(s.requests), 0)
  history.add(7, false) // reuses the burst's slot, starting from zero
  assert.deepEqual(history.series().bytes.slice(-1), [7])
  assert.equal(sum(history.series().requests), 1)
})

test('history matches a plain per-second map over any traffic, and stays the window\'s length', () => {
  // Reference: every response kept by its second; the ring must agree on the last `seconds`.
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 30 }),
    fc.array(fc.record({ gapMs: fc.integer({ min: 0, max: 20_000 }), bytes: fc.nat(1e6), asset: fc.boolean() }), { maxLength: 200 }),
    (seconds, events) => {
      const clock = fakeClock()
      const history = createOriginHistory({ seconds, now: clock.now })
      /** @type {Map<number, { requests: number, bytes: number, assetBytes: number }>} */
      const reference = new Map()
      for (const { gapMs, bytes, asset } of events) {
        clock.t += gapMs
        history.add(bytes, asset)
        const second = Math.floor(clock.t / 1000)
        const r = reference.get(second) ?? { requests: 0, bytes: 0, assetBytes: 0 }
        r.requests++
        r.bytes += bytes
        if (asset) r.assetBytes += bytes
        reference.set(second, r)
      }
      const s = history.series()
      const latest = Math.floor(clock.t / 1000)
      assert.equal(s.end, latest * 1000)
      for (const key of /** @type {const} */ (['requests', 'bytes', 'assetBytes'])) {
        assert.equal(s[key].length, seconds)
        assert.deepEqual(s[key], s[key].map((_, i) => reference.get(latest - seconds + 1 + i)?.[key] ?? 0), key)
      }
    }
  ))
})

test('history: its size is a positive whole number of seconds', () => {
  for (const seconds of [0, -1, 1.5, NaN]) assert.throws(() => createOriginHistory({ seconds }), TypeError)
})

test('origin stats: the history sums to the counters, and a reset clears both', () => {
  const clock = fakeClock()
  const stats = createOriginStats({ historySeconds: 60, now: clock.now })
  stats.record('/img/p01.png', 1000, true)
  clock.t += 1500
  stats.record('/', 300)
  stats.record('/img/p01.png', 0, true) // a 304
  const h = stats.history()
  assert.equal(sum(h.bytes), stats.snapshot().bytes)
  assert.equal(sum(h.requests), stats.snapshot().requests)
  assert.equal(sum(h.assetBytes), 1000)
  stats.reset()
  assert.equal(sum(stats.history().requests), 0)
})
