/**
 * The `update` handler, called directly on the memory store (handler-context.js).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { h, handlerContext } from './handler-context.js'

/**
 * @param {import('./handler-context.js').Harness} hc
 * @param {string} id
 * @returns {Promise<string[]>} what the store lists for the peer, sorted
 */
const listed = async (hc, id) => (await hc.store.getPeer(id))?.assets.sort() ?? []

test('update applies removals first and only the real difference, in the session and the store', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined([h('a'), h('b')])
  const updated = await hc.send(peer, { type: 'update', add: [h('c'), h('b'), h('d'), h('d')], remove: [h('a'), h('d'), h('zz')] })
  // `d` is in both lists: it ends up held; `zz` was never held: nothing to remove.
  assert.deepEqual(updated, { type: 'updated', holding: 3 })
  assert.deepEqual([...peer.assets].sort(), [h('b'), h('c'), h('d')].sort())
  assert.deepEqual(await listed(hc, peer.peerId), [h('b'), h('c'), h('d')].sort())
  assert.equal(hc.coordinator.holdings, 3)
  assert.equal(hc.context.counters.updates, 1)
  assert.deepEqual(await hc.send(peer, { type: 'update' }), { type: 'updated', holding: 3 }, 'an empty update changes nothing')
})

test('update counts each hash once, and keeps one in both lists held, however long the lists', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined([h('a'), h('b')])
  // Lists of one and of two (the same hash twice) are taken as they come; longer ones go through a Set.
  assert.deepEqual(await hc.send(peer, { type: 'update', add: [h('c'), h('c')], remove: [h('a'), h('a')] }), { type: 'updated', holding: 2 })
  assert.equal(hc.coordinator.holdings, 2)
  const many = Array.from({ length: 12 }, (_, i) => h(`n${i}`))
  assert.deepEqual(await hc.send(peer, { type: 'update', add: [...many, many[0], h('b')], remove: [h('b'), many[11], h('c'), h('c')] }), { type: 'updated', holding: 13 })
  assert.deepEqual([...peer.assets].sort(), [h('b'), ...many].sort())
  assert.deepEqual(await listed(hc, peer.peerId), [h('b'), ...many].sort())
  assert.equal(hc.coordinator.holdings, 13)
})

test('update before join is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'update', add: [h('a')] }), { code: 'MGH_ERR_NOT_JOINED' })
})

test('past maxAssetsPerPeer or maxHoldings an update is refused and changes nothing', async (t) => {
  const hc = await handlerContext({ maxAssetsPerPeer: 3, maxAssetsPerMessage: 3, maxHoldings: 4 })
  t.after(() => hc.close())
  const peer = await hc.joined([h('a'), h('b')])
  await assert.rejects(hc.send(peer, { type: 'update', add: [h('c'), h('d')] }), { code: 'MGH_ERR_TOO_MANY_ASSETS', message: /4 > 3/ })
  // Swapping keeps it within its own cap.
  assert.deepEqual(await hc.send(peer, { type: 'update', add: [h('c'), h('d')], remove: [h('a')] }), { type: 'updated', holding: 3 })
  const other = await hc.joined([h('x')])
  await assert.rejects(hc.send(other, { type: 'update', add: [h('y')] }), { code: 'MGH_ERR_CAPACITY' })
  assert.deepEqual([...other.assets], [h('x')])
  assert.equal(hc.coordinator.holdings, 4)
})

test('serving: false takes everything out and lists nothing announced until serving: true', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined([h('a'), h('b')])
  assert.deepEqual(await hc.send(peer, { type: 'update', serving: false, add: [h('c')] }), { type: 'updated', holding: 0 })
  assert.equal(peer.serving, false)
  assert.deepEqual(await listed(hc, peer.peerId), [])
  assert.equal(hc.coordinator.holdings, 0)
  assert.equal(await hc.metric('maygh_withdrawals_total'), 1)
  assert.deepEqual(await hc.send(peer, { type: 'update', add: [h('c')] }), { type: 'updated', holding: 0 }, 'announced while not serving: not listed')
  assert.deepEqual(await hc.send(peer, { type: 'update', serving: true, add: [h('c')] }), { type: 'updated', holding: 1 })
  assert.deepEqual(await listed(hc, peer.peerId), [h('c')])
  await hc.send(peer, { type: 'update', serving: true })
  assert.equal(await hc.metric('maygh_withdrawals_total'), 1, 'only going from serving to not counts')
})

test('a quarantined peer\'s update is acknowledged and not listed', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined()
  peer.quarantined = true
  assert.deepEqual(await hc.send(peer, { type: 'update', add: [h('a')] }), { type: 'updated', holding: 0 })
  assert.deepEqual(await listed(hc, peer.peerId), [])
  assert.equal(hc.context.counters.updates, 0)
})

test('an update the store fails is refused; what it may have listed is removed when the peer leaves', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined([h('a')])
  hc.store.updatePeer = async () => { throw new Error('store down') }
  await assert.rejects(hc.send(peer, { type: 'update', add: [h('b')], remove: [h('a')] }), /store down/)
  assert.deepEqual([...peer.assets], [h('a')], 'the session keeps what the store surely lists')
  assert.deepEqual([...(peer.unsure ?? [])].sort(), [h('a'), h('b')].sort())
  assert.equal(hc.coordinator.holdings, 1)
})

test('on the in-process store an update is answered at once, with no promise; a store that throws at once refuses it as one that rejects', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const peer = await hc.joined([h('a')])
  const reply = hc.handle(peer, { type: 'update', add: [h('b')] })
  assert.equal(reply instanceof Promise, false)
  assert.deepEqual(reply, { type: 'updated', holding: 2 })
  hc.store.updatePeer = () => { throw new Error('store down') }
  assert.throws(() => hc.handle(peer, { type: 'update', add: [h('c')], remove: [h('a')] }), /store down/)
  assert.deepEqual([...peer.assets].sort(), [h('a'), h('b')].sort())
  assert.deepEqual([...(peer.unsure ?? [])].sort(), [h('a'), h('c')].sort())
  assert.equal(hc.coordinator.holdings, 2)
})
