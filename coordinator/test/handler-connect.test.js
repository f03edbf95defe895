/**
 * The `connect` handler, called directly on the memory store (handler-context.js):
 * signals go only to peers the sender was introduced to, within the
 * introduction's time and bytes, to a socket here or over the bus to another shard.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OTHER_SHARD, h, handlerContext, peerOn } from './handler-context.js'

const A = h('a')
const OFFER = { type: 'offer', sdp: 'v=0' }

/**
 * A holder of A and a peer that looked it up (so it is introduced to the holder).
 * @param {import('./handler-context.js').Harness} hc
 */
async function introduced (hc) {
  const holder = await hc.joined([A])
  const asker = await hc.joined()
  assert.deepEqual((await hc.send(asker, { type: 'lookup', hash: A })).peers, [holder.peerId])
  return { holder, asker }
}

test('connect relays a signal to a peer a lookup introduced, which may then answer', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const { holder, asker } = await introduced(hc)
  assert.deepEqual(await hc.send(asker, { type: 'connect', to: holder.peerId, signal: OFFER, ref: 4 }), { type: 'relayed', to: holder.peerId })
  assert.deepEqual(hc.received(holder), [{ type: 'connect', from: asker.peerId, signal: OFFER, introduced: true }])
  assert.equal(hc.context.counters.relayed, 1)
  // The holder was introduced by the signal: it may answer (without a ref: no reply), not report.
  assert.equal(await hc.send(holder, { type: 'connect', to: asker.peerId, signal: { type: 'answer', sdp: 'v=0' } }), undefined)
  assert.equal(hc.received(asker).length, 1)
  assert.equal(holder.introductions?.looked(asker.peerId, holder.now()), false)
})

test('connect to a peer not introduced, to itself, or before join is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const { holder, asker } = await introduced(hc)
  const stranger = await hc.joined()
  await assert.rejects(hc.send(stranger, { type: 'connect', to: holder.peerId, signal: OFFER }), { code: 'MGH_ERR_NOT_INTRODUCED' })
  await assert.rejects(hc.send(holder, { type: 'connect', to: asker.peerId, signal: OFFER }), { code: 'MGH_ERR_NOT_INTRODUCED' }, 'a holder is not introduced to who looked it up')
  await assert.rejects(hc.send(asker, { type: 'connect', to: asker.peerId, signal: OFFER }), { code: 'MGH_ERR_BAD_FIELD', message: /"to" must be another peer/ })
  await assert.rejects(hc.send(hc.open(), { type: 'connect', to: holder.peerId, signal: OFFER }), { code: 'MGH_ERR_NOT_JOINED' })
  assert.deepEqual(hc.received(holder), [])
})

test('an introduction ends after introductionTtlMs, and lets introductionSignalBytes through', async (t) => {
  const hc = await handlerContext({ introductionSignalBytes: 1024, introductionTtlMs: 5000 })
  t.after(() => hc.close())
  const { holder, asker } = await introduced(hc)
  const big = { type: 'offer', sdp: 'x'.repeat(600) }
  await hc.send(asker, { type: 'connect', to: holder.peerId, signal: big })
  await assert.rejects(hc.send(asker, { type: 'connect', to: holder.peerId, signal: big }), { code: 'MGH_ERR_SIGNAL_BUDGET' })
  assert.equal(hc.received(holder).length, 1)
  // Another lookup that names it renews the budget; time runs out all the same.
  await hc.send(asker, { type: 'lookup', hash: A })
  await hc.send(asker, { type: 'connect', to: holder.peerId, signal: big })
  hc.advance(5000)
  await assert.rejects(hc.send(asker, { type: 'connect', to: holder.peerId, signal: OFFER }), { code: 'MGH_ERR_NOT_INTRODUCED' })
})

test('connect to an introduced peer that has left this shard is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const { holder, asker } = await introduced(hc)
  hc.sessions.delete(holder.peerId)
  await assert.rejects(hc.send(asker, { type: 'connect', to: holder.peerId, signal: OFFER }), { code: 'MGH_ERR_UNKNOWN_PEER' })
})

test('connect to a peer on another shard goes over the bus, if a coordinator listens as it and lists the peer', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const away = peerOn(OTHER_SHARD, 'away')
  await hc.store.addPeer(away, [A])
  /** @type {unknown[]} */
  const bus = []
  const asker = await hc.joined()
  assert.deepEqual((await hc.send(asker, { type: 'lookup', hash: A })).peers, [away])
  // Nobody listens as that shard (its coordinator died since its last beat): refused at once.
  await assert.rejects(hc.send(asker, { type: 'connect', to: away, signal: OFFER, ref: 1 }), { code: 'MGH_ERR_UNKNOWN_PEER' })
  await hc.store.subscribe(OTHER_SHARD, (message) => bus.push(message))
  assert.deepEqual(await hc.send(asker, { type: 'connect', to: away, signal: OFFER, ref: 2 }), { type: 'relayed', to: away })
  await new Promise((resolve) => queueMicrotask(() => resolve(undefined)))
  assert.deepEqual(bus.slice(-1), [{ to: away, from: asker.peerId, signal: OFFER }])
  assert.equal(hc.context.counters.forwarded, 1)
  // A peer no longer listed (it left that shard) is refused, though the shard heard it.
  await hc.store.removePeer(away, [A])
  await assert.rejects(hc.send(asker, { type: 'connect', to: away, signal: OFFER }), { code: 'MGH_ERR_UNKNOWN_PEER' })
})

test('connect to a peer on a shard that is not live is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const asker = await hc.joined()
  const gone = peerOn('gone', 'x')
  asker.introduced().add(gone, asker.now(), true)
  await assert.rejects(hc.send(asker, { type: 'connect', to: gone, signal: OFFER }), { code: 'MGH_ERR_UNKNOWN_PEER' })
})

test('in privacy mode a candidate that is not a relay one is refused, and a relay one goes on without its base address', async (t) => {
  const hc = await handlerContext({ iceTransportPolicy: 'relay', turnUrls: ['turn:turn.example:3478'], turnSecret: 't'.repeat(16) })
  t.after(() => hc.close())
  const holder = hc.open()
  await hc.send(holder, { type: 'join', v: 4, have: [A] })
  const asker = hc.open({ ip: '198.51.200.1' })
  await hc.send(asker, { type: 'join', v: 4 })
  await hc.send(asker, { type: 'lookup', hash: A })
  const candidate = (/** @type {string} */ type) => ({ candidate: { candidate: `candidate:1 1 udp 1 192.0.2.7 5000 typ ${type} raddr 10.0.0.1 rport 9`, sdpMid: '0' } })
  await assert.rejects(hc.send(asker, { type: 'connect', to: /** @type {string} */ (holder.peerId), signal: candidate('host') }), { code: 'MGH_ERR_RELAY_ONLY' })
  await hc.send(asker, { type: 'connect', to: /** @type {string} */ (holder.peerId), signal: candidate('relay') })
  assert.deepEqual(hc.received(holder).map((m) => m.signal.candidate.candidate), ['candidate:1 1 udp 1 192.0.2.7 5000 typ relay raddr 0.0.0.0 rport 0'])
})
