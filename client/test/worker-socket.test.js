/**
 * The worker's own coordinator socket (worker-socket.js) against a real
 * coordinator, and the page's end of it (worker-route.js): it joins as a
 * fetch-only peer; a page's lookup reply comes back to that page with its own
 * ref, whatever refs other pages used; a holder's answer to an offer the
 * lookup carried comes back to the page that made it, by its `cid`; only
 * `lookup`, `connect` and `report` pass; when the socket goes, what a page
 * awaits fails at once (MGH_ERR_OFFLINE, its own ref) and a socket that never
 * opened is not tried again at every navigation. Its `lookup` for a page
 * whose script has not run hands the holders invitations to make offers for it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { startCoordinator } from '../../coordinator/src/server.js'
import { TestClient } from '../../test/support/test-client.js'
import { h } from '../../coordinator/test/store-contract.js'
import { freePort } from '../../test/support/redis-server.js'
import { until } from '../../test/support/browsers.js'
import { PEER_ID_PATTERN } from '../../protocol/index.js'
import { subjectOf } from '../../coordinator/src/quarantine.js'
import { WorkerSocket } from '../src/worker-socket.js'
import { WorkerRoute } from '../src/worker-route.js'

/** A page as the worker sees it: what it was sent. */
const page = () => {
  /** @type {any[]} */
  const got = []
  return { got, postMessage: (/** @type {any} */ m) => got.push(m) }
}

/** @param {{ changed?: () => void, WebSocket?: any }} [o] */
const workerSocket = (o = {}) => new WorkerSocket({
  toPage: (p, msg) => p.postMessage(msg),
  changed: o.changed ?? (() => {}),
  WebSocket: o.WebSocket ?? /** @type {any} */ (WebSocket)
})

test('it joins as a fetch-only peer; each page gets its own replies with its own refs, and the signals of the connections it started', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const holder = await TestClient.open(coordinator.url)
  let changes = 0
  const socket = workerSocket({ changed: () => changes++ })
  try {
    const holderId = (await holder.join([h('a')])).id
    socket.configure({ urls: [coordinator.url], visitor: 'v'.repeat(32) })
    await until(async () => socket.up)
    assert.equal(changes, 1)
    assert.match(String(socket.id), PEER_ID_PATTERN)
    const session = [...coordinator.sessions.values()].find((s) => s.peerId === socket.id)
    assert.equal(session?.assets.size, 0, 'it holds nothing')
    assert.equal(session?.subject, subjectOf('key', 'v'.repeat(32)), 'as the page\'s visitor key (quarantine counts its reports as the page\'s)')

    // Two pages, both with ref 1: each gets its reply, with ref 1.
    const p1 = page()
    const p2 = page()
    const offer = { cid: 'cid-of-p1', sdp: { type: 'offer', sdp: 'v=0\r\n' } }
    assert.equal(socket.send(p1, { type: 'lookup', hashes: [h('a')], offers: [offer], ref: 1 }), true)
    assert.equal(socket.send(p2, { type: 'lookup', hashes: [h('a'), h('b')], ref: 1 }), true)
    await until(async () => p1.got.length === 1 && p2.got.length === 1)
    assert.deepEqual(p1.got[0].found, { [h('a')]: [holderId] })
    assert.equal(p1.got[0].offered?.[holderId], 'cid-of-p1')
    assert.equal(p1.got[0].ref, 1)
    assert.deepEqual(p2.got[0].found, { [h('a')]: [holderId], [h('b')]: [] })
    assert.equal(p2.got[0].ref, 1)

    // The holder got the offer, from the worker's peer; its answer goes back to p1 only.
    const got = await holder.next()
    assert.equal(got.type, 'connect')
    assert.equal(got.from, socket.id)
    holder.sendRaw(JSON.stringify({ v: 4, type: 'connect', to: socket.id, signal: { cid: 'cid-of-p1', sdp: { type: 'answer', sdp: 'v=0\r\n' } } }))
    await until(async () => p1.got.length === 2)
    assert.deepEqual(p1.got[1].signal, { cid: 'cid-of-p1', sdp: { type: 'answer', sdp: 'v=0\r\n' } })
    assert.equal(p2.got.length, 1)

    // A page's own socket's business does not pass.
    for (const type of ['join', 'update', 'usage', 'nonsense']) assert.equal(socket.send(p1, { type, have: [h('c')], ref: 2 }), false, type)
    assert.equal(session?.assets.size, 0)

    // Gone: what p1 awaits fails with its own ref; pages are told.
    assert.equal(socket.send(p1, { type: 'lookup', hashes: [h('a')], ref: 7 }), true)
    socket.close()
    assert.equal(socket.up, false)
    assert.deepEqual(p1.got[2], { type: 'error', code: 'MGH_ERR_OFFLINE', message: 'not connected to a coordinator', ref: 7 })
    assert.equal(changes, 2)
    assert.equal(socket.send(p1, { type: 'lookup', hashes: [h('a')], ref: 8 }), false)
    // Opened again at the next navigation (it had joined: no failure to wait out).
    socket.open()
    await until(async () => socket.up)
  } finally {
    socket.close()
    await holder.close()
    await coordinator.close()
  }
})

test('a lookup for a page whose script has not run names the holders and hands each of the best an invitation from the worker\'s peer; the offer and candidates they send for it go to that page', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const holder = await TestClient.open(coordinator.url)
  const socket = workerSocket()
  try {
    const holderId = (await holder.join([h('a')])).id
    const p1 = page()
    assert.equal(await socket.lookup([h('a')], 3, p1, 1000), null, 'not up: nothing known')
    socket.configure({ urls: [coordinator.url] })
    await until(async () => socket.up)
    const reply = await socket.lookup([h('a'), h('b')], 3, p1, 2000)
    assert.deepEqual(reply?.found, { [h('a')]: [holderId], [h('b')]: [] })
    const cid = reply?.offered?.[holderId]
    assert.equal(typeof cid, 'string', 'the holder was invited')
    const got = await holder.next()
    assert.deepEqual([got.type, got.from, got.signal, got.introduced], ['connect', socket.id, { cid, invite: true }, true])
    // The holder makes the offer, to the worker's peer: it comes to the page, as its candidates do.
    holder.sendRaw(JSON.stringify({ v: 5, type: 'connect', to: socket.id, signal: { cid, sdp: { type: 'offer', sdp: 'v=0\r\n' } } }))
    holder.sendRaw(JSON.stringify({ v: 5, type: 'connect', to: socket.id, signal: { cid, candidate: { candidate: 'c' } } }))
    await until(async () => p1.got.length === 2)
    assert.deepEqual(p1.got.map((m) => [m.from, m.signal]), [[holderId, { cid, sdp: { type: 'offer', sdp: 'v=0\r\n' } }], [holderId, { cid, candidate: { candidate: 'c' } }]])
    // Without invitations: the holders named, nobody invited.
    const plain = await socket.lookup([h('a')], 0, p1, 2000)
    assert.deepEqual([plain?.found, plain?.offered], [{ [h('a')]: [holderId] }, undefined])
    // The socket goes before the answer: nothing known, at once.
    const pending = socket.lookup([h('a')], 3, p1, 60000)
    socket.close()
    assert.equal(await pending, null)
  } finally {
    socket.close()
    await holder.close()
    await coordinator.close()
  }
})

test('a coordinator that cannot be reached is not tried again at every navigation, only when a page says anew where to go; peers off closes the socket', async () => {
  let made = 0
  const Counting = class extends WebSocket {
    /** @param {string} url */
    constructor (url) {
      super(url)
      made++
      this.on('error', () => {})
    }
  }
  const socket = workerSocket({ WebSocket: Counting })
  socket.configure({ urls: [`ws://127.0.0.1:${await freePort()}`] })
  await until(async () => made === 1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  socket.open()
  socket.open()
  assert.equal(made, 1)
  assert.equal(socket.up, false)
  // Said anew by a page (a fresh token, say): tried again at once.
  socket.configure({ urls: [`ws://127.0.0.1:${await freePort()}`] })
  await until(async () => made === 2)

  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  try {
    const up = workerSocket()
    up.configure({ urls: [coordinator.url] })
    await until(async () => up.up)
    up.configure(null)
    assert.equal(up.up, false)
    await until(async () => coordinator.sessions.size === 0)
  } finally {
    await coordinator.close()
  }
})

test('the page\'s end: requests by ref, answered, refused, timed out, or failed when the worker\'s socket goes; signals come as `connect`', async (t) => {
  /** @type {any[]} */
  const posted = []
  const route = new WorkerRoute((m) => posted.push(m))
  await assert.rejects(route.request({ type: 'lookup' }, 1000), { code: 'MGH_ERR_OFFLINE' }, 'not up yet')
  assert.equal(route.send({ type: 'report' }), false)
  let ups = 0
  route.on('up', () => ups++)
  route.via({ maygh: 'via', id: 'shard~worker', ice: { iceServers: [{ urls: 'stun:x' }] } })
  route.via({ maygh: 'via', id: 'shard~worker', ice: { iceServers: [{ urls: 'stun:x' }] } })
  assert.equal(ups, 1, 'up once, as it joins')
  assert.equal(route.joined, true)
  assert.deepEqual(route.ice, { iceServers: [{ urls: 'stun:x' }] })

  const answered = route.request({ type: 'lookup', hashes: ['a'] }, 1000)
  const refused = route.request({ type: 'connect' }, 1000)
  assert.deepEqual(posted.map((p) => [p.maygh, p.msg.type, p.msg.ref]), [['frame', 'lookup', 1], ['frame', 'connect', 2]])
  route.frame({ type: 'holders', found: { a: [] }, ref: 1 })
  route.frame({ type: 'error', code: 'MGH_ERR_UNKNOWN_PEER', message: 'gone', ref: 2 })
  assert.deepEqual(await answered, { type: 'holders', found: { a: [] }, ref: 1 })
  await assert.rejects(refused, { code: 'MGH_ERR_UNKNOWN_PEER' })

  /** @type {any[]} */
  const signals = []
  route.on('connect', (/** @type {any} */ m) => signals.push(m))
  route.frame({ type: 'connect', from: 'holder', signal: { cid: 'c' } })
  route.frame({ type: 'connect', from: 'holder' })
  assert.deepEqual(signals, [{ type: 'connect', from: 'holder', signal: { cid: 'c' } }])

  t.mock.timers.enable({ apis: ['setTimeout'] })
  const late = route.request({ type: 'lookup' }, 1000)
  t.mock.timers.tick(1000)
  await assert.rejects(late, { code: 'MGH_ERR_REQUEST_TIMEOUT' })

  const cut = route.request({ type: 'lookup' }, 1000)
  let down = 0
  route.on('down', () => down++)
  route.via({ maygh: 'via', id: null })
  await assert.rejects(cut, { code: 'MGH_ERR_OFFLINE' })
  assert.equal(down, 1)
  assert.equal(route.joined, false)
})
