/**
 * A dead shard's clients find a live coordinator at once, however many stale
 * URLs they know (issue 24): three coordinator processes on one Redis, 20
 * clients on B running the page's own coordinator connection, two URLs where
 * nothing listens among their configured ones; D is SIGKILLed (still listed
 * by the registry for a while), then B. bench/failover.js runs the same
 * scenario with more clients and prints the times.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runFailover } from '../../bench/failover.js'

test('a shard SIGKILLed while stale URLs are known: every one of its clients is on a live coordinator within 5 s', { timeout: 90_000 }, async (t) => {
  const { rejoinMs, joinedAt, attempts } = await runFailover({ clients: 20, waitMs: 10_000 })
  const slowest = Math.max(...rejoinMs)
  t.diagnostic(`re-joined after ${[...rejoinMs].sort((a, b) => a - b).join(', ')} ms; ${attempts} sockets opened`)
  assert.deepEqual(joinedAt, { A: 20 }, 'all on the one live coordinator')
  assert.ok(slowest <= 5000, `the last back after ${slowest} ms`)
})
