/**
 * The worker's question to the coordinator before its page has joined
 * (held-check.js), against a real coordinator: one request per turn, held or
 * not per asset; nothing known (null) when the coordinator cannot be reached
 * or does not answer in time.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { startCoordinator } from '../../coordinator/src/server.js'
import { TestClient } from '../../test/support/test-client.js'
import { h } from '../../coordinator/test/store-contract.js'
import { HeldCheck } from '../src/held-check.js'
import { freePort } from '../../test/support/redis-server.js'

test('assets asked in one turn go as one request; each is said held or not', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const holder = await TestClient.open(coordinator.url)
  try {
    await holder.join([h('a'), h('c')])
    const check = new HeldCheck({ urls: [coordinator.url], timeoutMs: 2000 })
    assert.deepEqual(await Promise.all([h('a'), h('b'), h('c')].map((x) => check.held(x))), [true, false, true])
    assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /^maygh_held_checks_total 1$/m)
    // More than one request holds: the next turn asks again.
    assert.equal(await check.held(h('b')), false)
    assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /^maygh_held_checks_total 2$/m)
  } finally {
    await holder.close()
    await coordinator.close()
  }
})

test('a coordinator that refuses the connection, or never answers, tells nothing (null), within the timeout', async () => {
  const refused = new HeldCheck({ urls: [`ws://127.0.0.1:${await freePort()}`], timeoutMs: 2000 })
  assert.equal(await refused.held(h('a')), null)
  const silent = createServer(() => {})
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  try {
    const { port } = /** @type {import('node:net').AddressInfo} */ (silent.address())
    const started = performance.now()
    assert.equal(await new HeldCheck({ urls: [`ws://127.0.0.1:${port}`], timeoutMs: 300 }).held(h('a')), null)
    assert.ok(performance.now() - started < 5000)
  } finally {
    silent.closeAllConnections()
    silent.close()
  }
})
