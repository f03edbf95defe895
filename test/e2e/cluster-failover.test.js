/**
 * A Redis Cluster master failover costs only that master's share (issue 24):
 * two coordinator processes on a real 6-node Cluster, one client holding 30
 * assets, another looking them all up every 250 ms while the master of the
 * registry's first copy is SIGKILLed and its replica takes over.
 * bench/cluster-failover.js runs the same scenario and prints the figures.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runClusterFailover } from '../../bench/cluster-failover.js'

test('the registry\'s master SIGKILLed: every lookup answered, the assets on live masters found throughout, both coordinators ready, changes back after the failover', { timeout: 120_000 }, async (t) => {
  const r = await runClusterFailover({ assets: 30, waitMs: 40_000 })
  t.diagnostic(JSON.stringify(r))
  assert.equal(r.unanswered, 0, 'every lookup answered within 5 s')
  // Before the registry had copies: 2-27 % (every shard's beats failed, and each looked dead to the other).
  assert.ok(r.live.found >= 0.9 * r.live.lookups, `assets on live masters found in ${r.live.found} of ${r.live.lookups} lookups`)
  // Before: 503 for 2-24 s. A beat's copies may be slow on a loaded machine: a second's slack.
  for (const [name, ms] of Object.entries(r.readyz503Ms)) assert.ok(ms <= 1000, `${name}'s /readyz said 503 for ${ms} ms`)
  assert.notEqual(r.recoveredMs, null, 'every asset found again once the replica took over')
  assert.notEqual(r.updatedMs, null, 'changes accepted again after the failover')
})
