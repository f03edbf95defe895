/**
 * The `lookup` handler, called directly on the memory store (handler-context.js):
 * which holders it names and in what order, whom it introduces, what it
 * marks, and the offers it carries.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OTHER_SHARD, h, handlerContext, peerOn } from './handler-context.js'

const A = h('a')

test('lookup names the asset\'s holders, never the asker, and introduces them to it', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const holders = [await hc.joined([A]), await hc.joined([A])]
  const asker = await hc.joined([A])
  const reply = await hc.send(asker, { type: 'lookup', hash: A })
  assert.equal(reply.type, 'holders')
  assert.equal(reply.hash, A)
  assert.deepEqual([...reply.peers].sort(), holders.map((s) => s.peerId).sort())
  for (const id of reply.peers) assert.equal(asker.introductions?.looked(id, asker.now()), true, 'introduced by a lookup')
  assert.equal(holders[0].introductions, null, 'a holder is introduced to the asker only once the asker signals it')
  assert.deepEqual(await hc.send(asker, { type: 'lookup', hash: h('nobody') }), { type: 'holders', hash: h('nobody'), peers: [] })
  assert.equal(hc.context.counters.lookups, 2)
  assert.equal(hc.context.counters.lookupHits, 1)
  assert.equal(await hc.metric('maygh_lookups_total{result="hit"}'), 1)
  assert.equal(await hc.metric('maygh_lookups_total{result="miss"}'), 1)
})

test('lookup ranks holders the asker has a channel to first, then the least recently chosen, and marks the first', async (t) => {
  const hc = await handlerContext({ maxHolders: 2 })
  t.after(() => hc.close())
  const [p, q, r] = [await hc.joined([A]), await hc.joined([A]), await hc.joined([A])]
  const asker = await hc.joined()
  const first = (await hc.send(asker, { type: 'lookup', hash: A })).peers
  assert.equal(first.length, 2, 'maxHolders')
  // The first named was marked as chosen: the next lookup puts it behind the holders never chosen.
  const second = (await hc.send(asker, { type: 'lookup', hash: A })).peers
  assert.equal(second.includes(first[0]), false)
  const third = (await hc.send(asker, { type: 'lookup', hash: A })).peers
  assert.notEqual(third[0], second[0])
  assert.notEqual(third[0], first[0], 'each holder is first in turn')
  // Connected first, even the one chosen last.
  assert.equal((await hc.send(asker, { type: 'lookup', hash: A, connected: [third[0]] })).peers[0], third[0])
  assert.deepEqual(new Set([first[0], second[0], third[0]]), new Set([p.peerId, q.peerId, r.peerId]))
})

test('a lookup of many assets answers each in one reply, and costs one message of its rate per asset', async (t) => {
  const hc = await handlerContext({ rateLimitPerSecond: 10, rateLimitBurst: 4 })
  t.after(() => hc.close())
  const holder = await hc.joined([A, h('b')])
  const asker = await hc.joined()
  const hashes = [A, h('b'), h('c'), A]
  const reply = await hc.send(asker, { type: 'lookup', hashes })
  assert.deepEqual(reply, { type: 'holders', found: { [A]: [holder.peerId], [h('b')]: [holder.peerId], [h('c')]: [] } })
  assert.equal(hc.context.counters.lookups, 3, 'once per distinct asset')
  assert.equal(hc.context.counters.lookupHits, 2)
  // The frame's own token is the coordinator's to take (server.js #receive); the handler takes one
  // per distinct asset past the first: two of the burst of 4 here, so four assets are over the rate.
  await assert.rejects(hc.send(asker, { type: 'lookup', hashes: [A, h('b'), h('c'), h('d')] }), { code: 'MGH_ERR_RATE_LIMITED', message: /a lookup of 4 assets is over the rate/ })
  assert.equal(hc.context.counters.lookups, 3, 'refused before the store is asked')
  assert.deepEqual((await hc.send(asker, { type: 'lookup', hashes: [A, h('b'), h('c')] })).found[A], [holder.peerId], 'three are within it')
})

test('a lookup the store fails answers no holders, with a warning', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await hc.joined([A])
  const asker = await hc.joined()
  hc.store.sampleHolders = async () => { throw new Error('store down') }
  assert.deepEqual(await hc.send(asker, { type: 'lookup', hashes: [A, h('b')] }), { type: 'holders', found: { [A]: [], [h('b')]: [] } })
  assert.deepEqual(hc.warnings.map((w) => w.context), ['lookup failed'])
})

test('on the in-process store a lookup is answered at once, with no promise; on a store that answers later, alike', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const holder = await hc.joined([A])
  const asker = await hc.joined()
  const now = hc.handle(asker, { type: 'lookup', hashes: [A, h('b')] })
  assert.equal(now instanceof Promise, false)
  assert.deepEqual(now, { type: 'holders', found: { [A]: [holder.peerId], [h('b')]: [] } })
  const { sampleHolders, markChosen } = hc.store
  hc.store.sampleHolders = async (...args) => sampleHolders.apply(hc.store, args)
  hc.store.markChosen = async (...args) => markChosen.apply(hc.store, args)
  const later = hc.handle(asker, { type: 'lookup', hashes: [A, h('b')] })
  assert.equal(later instanceof Promise, true)
  assert.deepEqual(await later, now)
})

test('a store that throws at once fails a lookup as one that rejects does: no holders, with a warning', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const holder = await hc.joined([A])
  const asker = await hc.joined()
  const { sampleHolders } = hc.store
  hc.store.sampleHolders = () => { throw new Error('store down') }
  assert.deepEqual(hc.handle(asker, { type: 'lookup', hash: A }), { type: 'holders', hash: A, peers: [] })
  hc.store.sampleHolders = sampleHolders
  hc.store.markChosen = () => { throw new Error('mark failed') }
  assert.deepEqual(hc.handle(asker, { type: 'lookup', hash: A }), { type: 'holders', hash: A, peers: [holder.peerId] }, 'a mark that fails does not fail the lookup')
  assert.deepEqual(hc.warnings.map((w) => w.context), ['lookup failed', 'markChosen failed'])
})

test('past its allowance of holders it did not know, a lookup names only those it knows', async (t) => {
  const hc = await handlerContext({ newHolderBurst: 2, newHoldersPerSecond: 1 })
  t.after(() => hc.close())
  for (let i = 0; i < 3; i++) await hc.joined([A])
  const asker = await hc.joined()
  const known = (await hc.send(asker, { type: 'lookup', hash: A })).peers
  assert.equal(known.length, 2)
  assert.equal(await hc.metric('maygh_withheld_holders_total'), 1)
  // Asked again, it is named those two (the third is still new to it).
  assert.deepEqual([...(await hc.send(asker, { type: 'lookup', hash: A })).peers].sort(), [...known].sort())
  hc.advance(1000)
  assert.equal((await hc.send(asker, { type: 'lookup', hash: A })).peers.length, 3, 'a second refills one')
})

test('under pairWithinNetwork a lookup finds only the holders of the asker\'s network', async (t) => {
  const hc = await handlerContext({ pairWithinNetwork: true })
  t.after(() => hc.close())
  const near = await hc.joined([A], { ip: '203.0.113.1' })
  await hc.joined([A], { ip: '198.51.100.1' })
  const asker = await hc.joined([], { ip: '203.0.113.2' })
  assert.deepEqual((await hc.send(asker, { type: 'lookup', hash: A })).peers, [near.peerId])
})

test('offers a lookup carries go to the best holders it names, one each, skipping those the asker has a channel to', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const [p, q] = [await hc.joined([A]), await hc.joined([A, h('b')])]
  const asker = await hc.joined()
  const offers = [{ cid: 'one', type: 'offer', sdp: 'v=0' }, { cid: 'two', type: 'offer', sdp: 'v=0' }]
  const reply = await hc.send(asker, { type: 'lookup', hashes: [A, h('b')], connected: [p.peerId], offers })
  // p is connected already: only q is handed an offer (the first), and named for it.
  assert.deepEqual(reply.offered, { [q.peerId]: 'one' })
  assert.deepEqual(hc.received(q), [{ type: 'connect', from: asker.peerId, signal: offers[0], introduced: true }])
  assert.deepEqual(hc.received(p), [])
  assert.equal(q.introductions?.peers.has(asker.peerId), true, 'q may answer')
})

test('an offer to a holder on a shard nobody listens as is not named in offered', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const away = peerOn(OTHER_SHARD, 'away')
  await hc.store.addPeer(away, [A])
  const asker = await hc.joined()
  const reply = await hc.send(asker, { type: 'lookup', hash: A, offers: [{ cid: 'one', type: 'offer', sdp: 'v=0' }] })
  assert.deepEqual(reply.peers, [away])
  assert.deepEqual(reply.offered, {})
})

test('lookup before join is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'lookup', hash: A }), { code: 'MGH_ERR_NOT_JOINED' })
})
