/**
 * The `join` handler, called directly on the memory store (handler-context.js).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PEER_ID_PATTERN, shardOfPeer } from '../../protocol/index.js'
import { signJoinToken } from '../src/join-token.js'
import { subjectOf } from '../src/quarantine.js'
import { SHARD, h, handlerContext } from './handler-context.js'

const SECRET = 's'.repeat(32)

test('join lists what the peer holds, once each, and welcomes it with an id on this shard', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const session = hc.open()
  const welcome = await hc.send(session, { type: 'join', have: [h('a'), h('b'), h('a')] })
  assert.equal(welcome.type, 'welcome')
  assert.match(welcome.id, PEER_ID_PATTERN)
  assert.equal(shardOfPeer(welcome.id), SHARD)
  assert.equal(welcome.holding, 2)
  assert.deepEqual(welcome.iceServers, [])
  assert.deepEqual(welcome.alternates, ['ws://there'])
  assert.deepEqual(welcome.limits, { maxMessageBytes: hc.config.maxMessageBytes, maxAssetsPerPeer: hc.config.maxAssetsPerPeer, maxAssetsPerMessage: hc.config.maxAssetsPerMessage })
  assert.equal(welcome.token, undefined, 'no secrets, no token')
  assert.equal(session.peerId, welcome.id)
  assert.deepEqual([...session.assets].sort(), [h('a'), h('b')].sort())
  assert.equal(hc.sessions.get(welcome.id), session)
  assert.equal(hc.coordinator.holdings, 2)
  assert.deepEqual((await hc.store.getPeer(welcome.id))?.assets.sort(), [h('a'), h('b')].sort())
  // Without a token or a browser key, the visitor is only this peer.
  assert.equal(session.subject, subjectOf('peer', welcome.id))

  await assert.rejects(hc.send(session, { type: 'join' }), { code: 'MGH_ERR_ALREADY_JOINED' })
})

test('a join names its visitor by the browser\'s key, and nothing else joins while the coordinator drains', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const keyed = hc.open()
  await hc.send(keyed, { type: 'join', visitor: 'k'.repeat(20) })
  assert.equal(keyed.subject, subjectOf('key', 'k'.repeat(20)))

  hc.coordinator.draining = true
  const late = hc.open()
  await assert.rejects(hc.send(late, { type: 'join', have: [h('a')] }), { code: 'MGH_ERR_DRAINING' })
  assert.equal(late.peerId, null)
  assert.equal(hc.sessions.size, 1)
})

test('past maxHoldings a join is refused and lists nothing', async (t) => {
  const hc = await handlerContext({ maxHoldings: 3 })
  t.after(() => hc.close())
  await hc.joined([h('a'), h('b')])
  const over = hc.open()
  await assert.rejects(hc.send(over, { type: 'join', have: [h('c'), h('d')] }), { code: 'MGH_ERR_CAPACITY' })
  assert.equal(over.peerId, null)
  assert.equal(hc.coordinator.holdings, 2)
  assert.deepEqual(await hc.store.sampleHolders([h('c')], 10), [[]])
})

test('a join the store fails is refused, its holdings given back and its id kept to remove later', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  hc.store.addPeer = async () => { throw new Error('store down') }
  const session = hc.open()
  await assert.rejects(hc.send(session, { type: 'join', have: [h('a')] }), /store down/)
  assert.equal(session.peerId, null)
  assert.equal(hc.coordinator.holdings, 0)
  assert.equal(hc.sessions.size, 0)
  const [[id, keys]] = [...hc.orphans.waiting]
  assert.equal(shardOfPeer(id), SHARD)
  assert.deepEqual(keys, [h('a')])
})

test('a quarantined visitor joins, but nothing it holds is listed', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const key = 'q'.repeat(20)
  await hc.store.quarantine(subjectOf('key', key), 60_000)
  const session = hc.open()
  const welcome = await hc.send(session, { type: 'join', have: [h('a')], visitor: key })
  assert.equal(welcome.holding, 0)
  assert.equal(session.quarantined, true)
  assert.deepEqual((await hc.store.getPeer(welcome.id))?.assets, [])
  assert.equal(hc.coordinator.holdings, 0)
})

test('with token secrets a join needs its site\'s token for its origin, and is welcomed with a fresh one', async (t) => {
  const hc = await handlerContext({ tokenSecrets: [SECRET] })
  t.after(() => hc.close())
  const origin = 'https://shop.example'
  await assert.rejects(hc.send(hc.open({ origin }), { type: 'join' }), { code: 'MGH_ERR_TOKEN_MISSING' })
  await assert.rejects(hc.send(hc.open({ origin }), { type: 'join', token: 'v1.x.y' }), { code: 'MGH_ERR_TOKEN_INVALID' })
  const foreign = signJoinToken({ origin: 'https://other.example' }, SECRET)
  await assert.rejects(hc.send(hc.open({ origin }), { type: 'join', token: foreign }), { code: 'MGH_ERR_TOKEN_ORIGIN' })
  assert.equal(hc.sessions.size, 0)

  const session = hc.open({ origin })
  const welcome = await hc.send(session, { type: 'join', token: signJoinToken({ origin, visitor: 'alice' }, SECRET) })
  assert.equal(session.visitor, 'alice')
  assert.equal(session.subject, subjectOf('visitor', 'alice'))
  // The fresh token joins again, for the same visitor.
  const again = hc.open({ origin })
  await hc.send(again, { type: 'join', token: welcome.token })
  assert.equal(again.visitor, 'alice')
})

test('in privacy mode a join of a protocol before relay-only is refused', async (t) => {
  const hc = await handlerContext({ iceTransportPolicy: 'relay', turnUrls: ['turn:turn.example:3478'], turnSecret: 't'.repeat(16) })
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'join', v: 3 }), { code: 'MGH_ERR_BAD_VERSION' })
  await assert.rejects(hc.send(hc.open(), { type: 'join' }), { code: 'MGH_ERR_BAD_VERSION' }, 'no v is protocol 1')
  const welcome = await hc.send(hc.open(), { type: 'join', v: 4 })
  assert.equal(welcome.iceTransportPolicy, 'relay')
  assert.equal(welcome.iceServers[0].urls[0], 'turn:turn.example:3478')
  assert.match(welcome.iceServers[0].username, new RegExp(`^\\d+:${welcome.id}$`))
})

test('with pairWithinNetwork a peer\'s holdings are listed under its network\'s name', async (t) => {
  const hc = await handlerContext({ pairWithinNetwork: true })
  t.after(() => hc.close())
  const session = await hc.joined([h('a')], { ip: '203.0.113.9' })
  const scope = `${await hc.context.networks.name('203.0.113.77')}/`
  assert.equal(session.scope, scope, 'the same /24, the same name')
  assert.deepEqual((await hc.store.getPeer(session.peerId))?.assets, [scope + h('a')])
})

test('a fetch-only join (a service worker\'s socket) lists nothing, is counted apart, and may not announce later', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const worker = hc.open()
  const welcome = await hc.send(worker, { type: 'join', have: [], fetchOnly: true, visitor: 'k'.repeat(20) })
  assert.equal(welcome.type, 'welcome')
  assert.equal(welcome.holding, 0)
  assert.equal(worker.fetchOnly, true)
  assert.equal(hc.coordinator.fetchOnly, 1)
  assert.equal(worker.subject, subjectOf('key', 'k'.repeat(20)), 'the same visitor as its pages')
  await assert.rejects(hc.send(worker, { type: 'update', add: [h('a')] }), { code: 'MGH_ERR_BAD_FIELD', message: /fetch-only/ })
  assert.equal(worker.assets.size, 0)

  await assert.rejects(hc.send(hc.open(), { type: 'join', have: [h('a')], fetchOnly: true }), { code: 'MGH_ERR_BAD_FIELD', message: /fetch-only peer lists nothing/ })
  await assert.rejects(hc.send(hc.open(), { type: 'join', fetchOnly: 'yes' }), { code: 'MGH_ERR_BAD_FIELD', message: /fetchOnly/ })
  const page = hc.open()
  await hc.send(page, { type: 'join', have: [h('a')], fetchOnly: false })
  assert.equal(page.fetchOnly, false)
  assert.equal(hc.coordinator.fetchOnly, 1)
})
