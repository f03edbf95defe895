/**
 * Signaling against a real coordinator (port 0), with `ws` standing in for
 * the browser's WebSocket: join with holdings, request/reply by ref, and
 * re-join with the current holdings after the coordinator restarts.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { startCoordinator } from '../../coordinator/src/server.js'
import { Signaling } from '../src/signaling.js'

const h = (/** @type {number} */ i) => `sha256-${String(i).padStart(43, 'A')}=`
before(() => { /** @type {any} */ (globalThis).WebSocket ??= WebSocket })
after(() => { if (globalThis.WebSocket === /** @type {any} */ (WebSocket)) delete (/** @type {any} */ (globalThis)).WebSocket })

/** @param {import('../src/signaling.js').Signaling} s */
const welcomed = (s) => new Promise((resolve) => s.on('welcome', resolve))

test('joins with its holdings, then answers lookups by ref', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const a = new Signaling({ url: coordinator.url, backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [h(1), h(2)] })
  const b = new Signaling({ url: coordinator.url, backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
  try {
    a.start()
    b.start()
    await Promise.all([welcomed(a), welcomed(b)])
    assert.match(/** @type {string} */ (a.id), /^[A-Za-z0-9_-]{22}$/)
    assert.ok(a.iceServers.some((s) => String(s.urls).startsWith('stun:127.0.0.1')), 'the coordinator\'s own STUN server')
    const reply = await b.request({ type: 'lookup', hash: h(2) }, 2000)
    assert.deepEqual(reply.peers, [a.id])
    await assert.rejects(b.request({ type: 'lookup', hash: 'nope' }, 2000), { code: 'MGH_ERR_BAD_FIELD' })
  } finally {
    a.stop()
    b.stop()
    await coordinator.close()
  }
})

test('after the coordinator restarts it reconnects and re-joins with its current holdings', async () => {
  let coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const port = Number(new URL(coordinator.url).port)
  let have = [h(1)]
  const a = new Signaling({ url: coordinator.url, backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => have })
  try {
    a.start()
    await welcomed(a)
    const down = new Promise((resolve) => a.on('down', resolve))
    await coordinator.close()
    await down
    assert.equal(a.joined, false)
    await assert.rejects(a.request({ type: 'lookup', hash: h(1) }, 1000), { code: 'MGH_ERR_OFFLINE' })
    have = [h(1), h(3)]
    const again = welcomed(a)
    coordinator = await startCoordinator({ port, stunPort: 0 })
    assert.deepEqual((/** @type {any} */ (await again)).have, have)
    const probe = new Signaling({ url: coordinator.url, backoffBaseMs: 50, backoffMaxMs: 200, getHave: () => [] })
    probe.start()
    await welcomed(probe)
    assert.deepEqual((await probe.request({ type: 'lookup', hash: h(3) }, 2000)).peers, [a.id])
    probe.stop()
  } finally {
    a.stop()
    await coordinator.close()
  }
})
