import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { startCoordinator } from '../src/server.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { TestClient } from '../../test/support/test-client.js'
import { signJoinToken } from '../src/join-token.js'
import { h, peerRemoved, sample } from './store-contract.js'
import { until } from '../../test/support/browsers.js'

/**
 * Resolves once peer `id` is gone from `coordinator` (its socket closed by the
 * coordinator itself, so the test holds no close event to wait on).
 * @param {import('../src/server.js').Coordinator} coordinator
 * @param {string} id
 */
async function peerRemovedById (coordinator, id) {
  const session = coordinator.sessions.get(id)
  if (session === undefined) return
  await peerRemoved(coordinator, id)
}
import { PEER_ID_PATTERN, heldUrl, shardOfPeer } from '../../protocol/index.js'

describe('coordinator over WebSocket (memory store)', () => {
  /** @type {import('../src/server.js').Coordinator} */
  let coordinator
  /** @type {Error[]} */
  const warnings = []
  before(async () => {
    coordinator = await startCoordinator({ port: 0, stunPort: 0, maxHolders: 2, maxMessageBytes: 4096, maxAssetsPerPeer: 10, maxAssetsPerMessage: 5 })
    coordinator.on('warning', (err) => warnings.push(err))
  })
  after(() => coordinator.close())

  test('join gives a peer id, the coordinator STUN server and the limits', async () => {
    const client = await TestClient.open(coordinator.url)
    const welcome = await client.join([h('a')])
    assert.equal(welcome.type, 'welcome')
    assert.match(welcome.id, PEER_ID_PATTERN)
    assert.equal(shardOfPeer(welcome.id), coordinator.shard)
    assert.deepEqual(welcome.iceServers, [{ urls: coordinator.stunUrl }])
    assert.equal(welcome.holding, 1)
    assert.match(coordinator.stunUrl, /^stun:127\.0\.0\.1:\d+$/)
    assert.deepEqual(welcome.limits, { maxMessageBytes: 4096, maxAssetsPerPeer: 10, maxAssetsPerMessage: 5 })
    await client.close()
  })

  test('lookup returns holders, never the asker, and update changes them', async () => {
    const a = await TestClient.open(coordinator.url)
    const b = await TestClient.open(coordinator.url)
    const { id: idA } = await a.join([h('x')])
    const { id: idB } = await b.join()
    assert.deepEqual(await b.request({ type: 'lookup', hash: h('x') }), { type: 'holders', hash: h('x'), peers: [idA], ref: 2 })
    assert.deepEqual((await a.request({ type: 'lookup', hash: h('x') })).peers, [])
    assert.deepEqual(await b.request({ type: 'update', add: [h('x'), h('y')] }), { type: 'updated', holding: 2, ref: 3 })
    assert.deepEqual((await a.request({ type: 'lookup', hash: h('y') })).peers, [idB])
    assert.deepEqual((await a.request({ type: 'update', remove: [h('x')] })).holding, 0)
    assert.deepEqual((await b.request({ type: 'lookup', hash: h('x') })).peers, [])
    await Promise.all([a.close(), b.close()])
  })

  test('one lookup for many assets (protocol 2): holders of each, introduced as one by one; version 1 still answered', async () => {
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => TestClient.open(coordinator.url)))
    const { id: idA } = await a.join([h('m1'), h('m2')])
    const { id: idB } = await b.join([h('m2')])
    await c.join()
    const before = coordinator.counters.lookups
    const reply = await c.request({ type: 'lookup', hashes: [h('m1'), h('m2'), h('m3'), h('m1')], connected: [idB] })
    assert.equal(reply.type, 'holders')
    assert.deepEqual(reply.found, { [h('m1')]: [idA], [h('m2')]: [idB, idA], [h('m3')]: [] }, 'each asset once, connected peers first')
    assert.equal(coordinator.counters.lookups - before, 3, 'counted as three lookups')
    for (const to of [idA, idB]) assert.equal((await c.request({ type: 'connect', to, signal: { cid: 'm' } })).type, 'relayed')
    // A client of protocol 1 (its `v`, a lookup of one hash) is answered as before.
    c.sendRaw(JSON.stringify({ v: 1, type: 'lookup', hash: h('m1'), ref: 90 }))
    assert.deepEqual(await c.next(), { type: 'holders', hash: h('m1'), peers: [idA], ref: 90 })
    const errorFor = async (/** @type {object} */ m) => (await c.request(m)).code
    assert.equal(await errorFor({ type: 'lookup', hashes: [] }), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor({ type: 'lookup', hashes: Array.from({ length: 65 }, (_, i) => h(`n${i}`)) }), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor({ type: 'lookup', hashes: [h('m1'), 'sha256-nope'] }), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor({ type: 'lookup', hash: h('m1'), hashes: [h('m1')] }), 'MGH_ERR_BAD_FIELD')
    await Promise.all([a.close(), b.close(), c.close()])
  })

  test('a lookup carrying offers (protocol 3) hands each to one holder it names, best first and not the connected ones; the holder may answer', async () => {
    const [a, b, c, asker] = await Promise.all([0, 1, 2, 3].map(() => TestClient.open(coordinator.url)))
    const { id: idA } = await a.join([h('o1')])
    const { id: idB } = await b.join([h('o1'), h('o2')])
    const { id: idC } = await c.join([h('o2')])
    const { id: me } = await asker.join()
    const offer = (/** @type {string} */ cid) => ({ cid, sdp: { type: 'offer', sdp: `v=0 ${cid}` } })
    const reply = await asker.request({ v: 3, type: 'lookup', hashes: [h('o1'), h('o2')], connected: [idC], offers: [offer('x1'), offer('x2'), offer('x3')] })
    const named = [...new Set(Object.values(reply.found).flat())]
    assert.deepEqual(named.sort(), [idA, idB, idC].sort())
    // Two holders the asker is not connected to, one offer each; the third offer has nobody to go to.
    assert.deepEqual(Object.keys(reply.offered).sort(), [idA, idB].sort())
    assert.deepEqual(Object.values(reply.offered).sort(), ['x1', 'x2'])
    for (const [holder, id] of /** @type {const} */ ([[a, idA], [b, idB]])) {
      const got = await holder.next()
      assert.deepEqual(got, { type: 'connect', from: me, signal: offer(reply.offered[id]), introduced: true })
      // The holder answers through the coordinator, as to a `connect` offer.
      assert.equal((await holder.request({ type: 'connect', to: me, signal: { cid: got.signal.cid, sdp: { type: 'answer', sdp: 'v=0' } } })).type, 'relayed')
      assert.equal((await asker.next()).from, id)
    }
    // One asset's lookup (`hash`) may carry offers too.
    const single = await asker.request({ type: 'lookup', hash: h('o2'), offers: [offer('y1')] })
    assert.equal(Object.keys(single.offered).length, 1)
    assert.equal(single.offered[single.peers[0]], 'y1')
    const errorFor = async (/** @type {unknown} */ offers) => (await asker.request({ type: 'lookup', hashes: [h('o1')], offers })).code
    assert.equal(await errorFor({}), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor(Array.from({ length: 5 }, (_, i) => offer(`z${i}`))), 'MGH_ERR_BAD_FIELD', 'more than maxLookupOffers')
    assert.equal(await errorFor([{ sdp: {} }]), 'MGH_ERR_BAD_FIELD', 'no cid')
    assert.equal(await errorFor([offer('same'), offer('same')]), 'MGH_ERR_BAD_FIELD', 'cids not distinct')
    assert.equal(await errorFor([offer('c'.repeat(33))]), 'MGH_ERR_BAD_FIELD', 'cid too long')
    await Promise.all([a, b, c, asker].map((x) => x.close()))
  })

  test('messages sent before the welcome arrives are handled after the join', async () => {
    const holder = await TestClient.open(coordinator.url)
    const { id: holderId } = await holder.join([h('early')])
    const eager = await TestClient.open(coordinator.url)
    const [welcome, found] = await Promise.all([
      eager.request({ type: 'join' }),
      eager.request({ type: 'lookup', hash: h('early') }),
      eager.request({ type: 'update', add: [h('e1')] })
    ])
    assert.equal(welcome.type, 'welcome')
    assert.deepEqual(found.peers, [holderId])
    await Promise.all([holder.close(), eager.close()])
  })

  test('lookup prefers connected peers, then the least recently chosen', async () => {
    const holders = await Promise.all([0, 1, 2].map(() => TestClient.open(coordinator.url)))
    const holderIds = []
    for (const c of holders) holderIds.push((await c.join([h('rot')])).id)
    const asker = await TestClient.open(coordinator.url)
    await asker.join()
    // maxHolders is 2: three lookups in a row hand out every holder, none three times.
    const counts = new Map(holderIds.map((id) => [id, 0]))
    for (let i = 0; i < 3; i++) {
      for (const id of (await asker.request({ type: 'lookup', hash: h('rot') })).peers) counts.set(id, /** @type {number} */ (counts.get(id)) + 1)
    }
    assert.deepEqual([...counts.values()].sort(), [2, 2, 2])
    const { peers } = await asker.request({ type: 'lookup', hash: h('rot'), connected: [holderIds[1]] })
    assert.equal(peers[0], holderIds[1])
    await Promise.all([...holders, asker].map((c) => c.close()))
  })

  test('connect relays signals both ways between peers a lookup introduced, with the sender id', async () => {
    const a = await TestClient.open(coordinator.url)
    const b = await TestClient.open(coordinator.url)
    const c = await TestClient.open(coordinator.url)
    const { id: idA } = await a.join()
    const { id: idB } = await b.join([h('intro')])
    const { id: idC } = await c.join()
    // Not introduced yet: refused both ways.
    assert.equal((await a.request({ type: 'connect', to: idB, signal: { cid: 'c0' } })).code, 'MGH_ERR_NOT_INTRODUCED')
    assert.equal((await b.request({ type: 'connect', to: idA, signal: { cid: 'c0' } })).code, 'MGH_ERR_NOT_INTRODUCED')
    assert.deepEqual((await a.request({ type: 'lookup', hash: h('intro') })).peers, [idB])
    // B may answer A only once A has signalled it.
    assert.equal((await b.request({ type: 'connect', to: idA, signal: { cid: 'c0' } })).code, 'MGH_ERR_NOT_INTRODUCED')
    a.sendRaw(JSON.stringify({ type: 'connect', to: idB, signal: { cid: 'c1', sdp: { type: 'offer', sdp: 'v=0' } } }))
    assert.deepEqual(await b.next(), { type: 'connect', from: idA, signal: { cid: 'c1', sdp: { type: 'offer', sdp: 'v=0' } }, introduced: true })
    b.sendRaw(JSON.stringify({ type: 'connect', to: idA, signal: { cid: 'c1', candidate: { candidate: 'x' } } }))
    assert.deepEqual(await a.next(), { type: 'connect', from: idB, signal: { cid: 'c1', candidate: { candidate: 'x' } }, introduced: true })
    // with a ref, success is acknowledged (and the signal still arrives); without one, only failures answer
    assert.deepEqual(await a.request({ type: 'connect', to: idB, signal: { cid: 'c2' } }), { type: 'relayed', to: idB, ref: a.nextRef - 1 })
    assert.deepEqual(await b.next(), { type: 'connect', from: idA, signal: { cid: 'c2' }, introduced: true })
    // C, whom no lookup introduced to either, reaches neither, nor they it.
    assert.equal((await c.request({ type: 'connect', to: idB, signal: { cid: 'c3' } })).code, 'MGH_ERR_NOT_INTRODUCED')
    assert.equal((await b.request({ type: 'connect', to: idC, signal: { cid: 'c3' } })).code, 'MGH_ERR_NOT_INTRODUCED')
    for (const to of [`${coordinator.shard}~${'A'.repeat(22)}`, `nowhere~${'A'.repeat(22)}`]) {
      assert.equal((await a.request({ type: 'connect', to, signal: {} })).code, 'MGH_ERR_NOT_INTRODUCED', to)
    }
    assert.equal((await a.request({ type: 'connect', to: 'A'.repeat(22), signal: {} })).code, 'MGH_ERR_BAD_FIELD', 'not a peer id')
    assert.equal((await a.request({ type: 'connect', to: idA, signal: {} })).code, 'MGH_ERR_BAD_FIELD')
    assert.equal(c.inbox.length + b.inbox.length + a.inbox.length, 0, 'no refused signal was delivered')
    await Promise.all([a.close(), b.close(), c.close()])
  })

  test('an introduction lasts introductionTtlMs and lets introductionSignalBytes through', async () => {
    let now = 0
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, introductionTtlMs: 5000, introductionSignalBytes: 1120 }, { now: () => now })
    try {
      const a = await TestClient.open(coordinator.url)
      const b = await TestClient.open(coordinator.url)
      await a.join()
      const { id: idB } = await b.join([h('ttl')])
      assert.deepEqual((await a.request({ type: 'lookup', hash: h('ttl') })).peers, [idB])
      const blob = { cid: 'x', sdp: 'y'.repeat(400) }
      assert.equal((await a.request({ type: 'connect', to: idB, signal: blob })).type, 'relayed')
      assert.equal((await a.request({ type: 'connect', to: idB, signal: blob })).type, 'relayed')
      // Charged what the holder is sent: the signal in its `connect` frame, about 500 bytes each.
      assert.equal((await a.request({ type: 'connect', to: idB, signal: blob })).code, 'MGH_ERR_SIGNAL_BUDGET', 'about 1,520 bytes > 1,120')
      assert.equal((await a.request({ type: 'connect', to: idB, signal: { cid: 'x' } })).type, 'relayed', 'what is left still goes')
      // A lookup that hands the holder out again renews the introduction: its time and its budget.
      now += 4000
      await a.request({ type: 'lookup', hash: h('ttl') })
      assert.equal((await a.request({ type: 'connect', to: idB, signal: blob })).type, 'relayed', 'a fresh budget')
      now += 4000
      assert.equal((await a.request({ type: 'connect', to: idB, signal: { cid: 'x' } })).type, 'relayed', '8 s after the first lookup, 4 s after the second')
      // Signals alone renew nothing: the introduction ends 5 s after the last lookup.
      now += 1000
      assert.equal((await a.request({ type: 'connect', to: idB, signal: { cid: 'x' } })).code, 'MGH_ERR_NOT_INTRODUCED', 'expired')
      await a.request({ type: 'lookup', hash: h('ttl') })
      assert.equal((await a.request({ type: 'connect', to: idB, signal: blob })).type, 'relayed')
      await Promise.all([a.close(), b.close()])
    } finally {
      await coordinator.close()
    }
  })

  test('a lookup that hands a holder out again makes its introduction the newest kept', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxIntroductions: 2 })
    try {
      const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map(() => TestClient.open(coordinator.url)))
      await a.join()
      const ids = [(await b.join([h('i1')])).id, (await c.join([h('i2')])).id, (await d.join([h('i3')])).id]
      for (const asset of ['i1', 'i2', 'i1', 'i3']) await a.request({ type: 'lookup', hash: h(asset) })
      // Kept: the second look at b, then d; c, the oldest, went.
      assert.equal((await a.request({ type: 'connect', to: ids[0], signal: { cid: 'n' } })).type, 'relayed')
      assert.equal((await a.request({ type: 'connect', to: ids[2], signal: { cid: 'n' } })).type, 'relayed')
      assert.equal((await a.request({ type: 'connect', to: ids[1], signal: { cid: 'n' } })).code, 'MGH_ERR_NOT_INTRODUCED')
      await Promise.all([a, b, c, d].map((x) => x.close()))
    } finally {
      await coordinator.close()
    }
  })

  test('a fetch-only peer (a service worker\'s socket) is not counted among the peers online, and is once it has left no longer counted at all', async () => {
    const peers = () => coordinator.stats().peers
    const before = peers()
    const metric = async (/** @type {string} */ name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${coordinator.httpUrl}/metrics`)).text())?.[1])
    const fetchOnlyBefore = await metric('maygh_fetch_only_peers')
    const worker = await TestClient.open(coordinator.url)
    assert.equal((await worker.request({ type: 'join', have: [], fetchOnly: true })).type, 'welcome')
    assert.equal(peers(), before)
    assert.equal(await metric('maygh_peers'), before)
    assert.equal(await metric('maygh_fetch_only_peers'), fetchOnlyBefore + 1)
    assert.equal(coordinator.stats().localFetchOnly, fetchOnlyBefore + 1)
    await worker.close()
    await until(async () => coordinator.fetchOnly === fetchOnlyBefore)
    assert.equal(peers(), before)
  })

  test('a peer that disconnects is gone from lookups', async () => {
    const a = await TestClient.open(coordinator.url)
    const c = await TestClient.open(coordinator.url)
    const { id: idA } = await a.join([h('gone')])
    await c.join()
    assert.deepEqual((await c.request({ type: 'lookup', hash: h('gone') })).peers, [idA])
    const removed = peerRemoved(coordinator, idA)
    await a.close()
    await removed
    assert.equal(coordinator.sessions.has(idA), false)
    assert.deepEqual((await c.request({ type: 'lookup', hash: h('gone') })).peers, [])
    assert.equal(await coordinator.store?.getPeer(idA), null)
    assert.equal((await c.request({ type: 'connect', to: idA, signal: {} })).code, 'MGH_ERR_UNKNOWN_PEER')
    await c.close()
  })

  test('every kind of bad input gets a coded error and the connection carries on', async () => {
    const bad = await TestClient.open(coordinator.url)
    const good = await TestClient.open(coordinator.url)
    const { id: goodId } = await good.join([h('ok')])
    const errorFor = async (/** @type {string | Buffer} */ raw) => { bad.sendRaw(raw); return (await bad.next()).code }
    assert.equal(await errorFor('{not json'), 'MGH_ERR_BAD_JSON')
    assert.equal(await errorFor('[1,2]'), 'MGH_ERR_BAD_MESSAGE')
    assert.equal(await errorFor('{"type":42}'), 'MGH_ERR_BAD_MESSAGE')
    assert.equal(await errorFor(Buffer.from([1, 2, 3])), 'MGH_ERR_BAD_MESSAGE')
    assert.equal(await errorFor('{"type":"dance"}'), 'MGH_ERR_UNKNOWN_TYPE')
    assert.equal(await errorFor('{"type":"__proto__"}'), 'MGH_ERR_UNKNOWN_TYPE')
    assert.equal(await errorFor('{"type":"join","v":6}'), 'MGH_ERR_BAD_VERSION')
    assert.equal(await errorFor(JSON.stringify({ type: 'join', padding: 'x'.repeat(5000) })), 'MGH_ERR_TOO_LARGE')
    assert.equal(await errorFor('{"type":"lookup","hash":"' + h('ok') + '"}'), 'MGH_ERR_NOT_JOINED')
    assert.equal(await errorFor('{"type":"join","have":"nope"}'), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor('{"type":"join","have":["sha256-short"]}'), 'MGH_ERR_BAD_FIELD')
    assert.equal(await errorFor('{"type":"join","ref":-1}'), 'MGH_ERR_BAD_FIELD')
    const tooMany = Array.from({ length: 6 }, (_, i) => h(`n${i}`))
    assert.equal(await errorFor(JSON.stringify({ type: 'join', have: tooMany })), 'MGH_ERR_TOO_MANY_ASSETS')
    // A validation error still echoes the request's ref.
    assert.deepEqual(await bad.request({ type: 'lookup', hash: 7 }), { type: 'error', code: 'MGH_ERR_BAD_FIELD', message: 'a field is missing or has the wrong type: "hash" must be an SRI sha256 string', ref: 1 })
    // The same socket still works, and is held to the per-peer asset limit.
    await bad.join(tooMany.slice(0, 5))
    assert.equal((await bad.request({ type: 'join' })).code, 'MGH_ERR_ALREADY_JOINED')
    assert.equal((await bad.request({ type: 'update', add: tooMany.slice(0, 5) })).holding, 5)
    assert.equal((await bad.request({ type: 'update', add: Array.from({ length: 5 }, (_, i) => h(`m${i}`)) })).holding, 10)
    assert.equal((await bad.request({ type: 'update', add: [h('m5')] })).code, 'MGH_ERR_TOO_MANY_ASSETS')
    // Removals apply first, so swapping one asset for another at the limit is fine.
    assert.equal((await bad.request({ type: 'update', add: [h('m5')], remove: [tooMany[0]] })).holding, 10)
    assert.equal((await bad.request({ type: 'lookup', hash: h('ok'), connected: ['not an id'] })).code, 'MGH_ERR_BAD_FIELD')
    assert.deepEqual((await bad.request({ type: 'lookup', hash: h('ok') })).peers, [goodId])
    assert.ok(warnings.length >= 15)
    await Promise.all([bad.close(), good.close()])
  })

  test('HTTP: /healthz, /readyz, /stats with CORS, coded 404', async () => {
    const health = await fetch(`${coordinator.httpUrl}/healthz`)
    assert.deepEqual(await health.json(), { ok: true, shard: coordinator.shard })
    const ready = await fetch(`${coordinator.httpUrl}/readyz`)
    assert.equal(ready.status, 200)
    assert.deepEqual(await ready.json(), { ready: true, shard: coordinator.shard, store: 'up', draining: false })
    const stats = await fetch(`${coordinator.httpUrl}/stats`)
    assert.equal(stats.headers.get('access-control-allow-origin'), '*')
    const body = await stats.json()
    for (const key of ['peers', 'holdings', 'shards', 'lookups', 'lookupHits', 'relayed', 'updates', 'connections', 'errors']) assert.equal(typeof body[key], 'number', key)
    assert.ok(body.lookups > 0)
    const missing = await fetch(`${coordinator.httpUrl}/nope`)
    assert.equal(missing.status, 404)
    assert.equal((await missing.json()).error.code, 'MGH_ERR_HTTP_NOT_FOUND')
  })
})

describe('GET /held: which assets any visitor holds, for a service worker before its page joins', () => {
  test('names the held ones among those asked, with CORS; coded 400 for a bad query; refuses origins allowedOrigins does not list', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
    const guarded = await startCoordinator({ port: 0, stunPort: 0, allowedOrigins: ['https://shop.example'] })
    const holder = await TestClient.open(coordinator.url)
    try {
      await holder.join([h('held-a'), h('held-b')])
      const held = (/** @type {string} */ base, /** @type {string[]} */ hashes, /** @type {RequestInit} */ init = {}) =>
        fetch(heldUrl(base.replace(/^http/, 'ws'), hashes), init)
      const lookups = coordinator.counters.lookups
      const res = await held(coordinator.httpUrl, [h('held-a'), h('nobody'), h('held-b'), h('held-a')])
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('access-control-allow-origin'), '*')
      assert.deepEqual(await res.json(), { held: [h('held-a'), h('held-b')] })
      // What nobody holds counts as a lookup that missed: its page will make none.
      assert.equal(coordinator.counters.lookups, lookups + 1)
      // Nobody is introduced: the asker has not joined, and a lookup names holders, not this.
      assert.deepEqual(await (await held(coordinator.httpUrl, [h('nobody')])).json(), { held: [] })
      for (const query of ['', '?hashes=', '?hashes=nope', `?hashes=${Array.from({ length: 65 }, (_, i) => encodeURIComponent(h(`n${i}`))).join(',')}`]) {
        const bad = await fetch(`${coordinator.httpUrl}/held${query}`)
        assert.equal(bad.status, 400, query.slice(0, 40))
        assert.equal((await bad.json()).error.code, 'MGH_ERR_HTTP_BAD_QUERY')
      }
      const foreign = await held(guarded.httpUrl, [h('held-a')], { headers: { origin: 'https://elsewhere.example' } })
      assert.equal(foreign.status, 403)
      assert.equal((await foreign.json()).error.code, 'MGH_ERR_ORIGIN_NOT_ALLOWED')
      assert.equal((await held(guarded.httpUrl, [h('held-a')], { headers: { origin: 'https://shop.example' } })).status, 200)
      assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /^maygh_held_checks_total 2$/m)
    } finally {
      await holder.close()
      await coordinator.close()
      await guarded.close()
    }
  })
})

describe('coordinator limits and liveness', () => {
  test('a frame over the hard limit closes only that socket (1009)', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxMessageBytes: 1024, hardMaxMessageBytes: 2048 })
    try {
      const big = await TestClient.open(coordinator.url)
      const other = await TestClient.open(coordinator.url)
      big.sendRaw('x'.repeat(4096))
      const [code] = await new Promise((resolve) => big.ws.once('close', (...args) => resolve(args)))
      assert.equal(code, 1009)
      assert.equal((await other.join()).type, 'welcome')
      await other.close()
    } finally {
      await coordinator.close()
    }
  })

  test('a flood: the first frame over the rate is answered, the rest dropped unread, a persistent one cut off', async () => {
    // The bucket runs on the test's clock: it stands still through the flood (so
    // exactly `burst` frames pass on any machine) and moves only when told.
    let now = 0
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, rateLimitPerSecond: 10, rateLimitBurst: 5, rateLimitCloseAfter: 20 }, { now: () => now })
    try {
      const client = await TestClient.open(coordinator.url)
      for (let i = 0; i < 10; i++) client.sendRaw('{"type":"nope"}')
      const codes = []
      for (let i = 0; i < 6; i++) codes.push((await client.next()).code)
      assert.deepEqual(codes, [...Array(5).fill('MGH_ERR_UNKNOWN_TYPE'), 'MGH_ERR_RATE_LIMITED'])
      now += 100 // 10 per second: one token
      // The next message in is the join's welcome: the four other dropped frames got no reply.
      assert.equal((await client.join()).type, 'welcome')
      assert.equal(coordinator.counters.dropped, 5)
      now += 60_000 // a long quiet spell refills only up to the burst
      const replies = await Promise.all(Array.from({ length: 5 }, () => client.request({ type: 'lookup', hash: h('x') })))
      assert.ok(replies.every((m) => m.type === 'holders'))
      // A lookup of many assets costs one message per asset: over what is left, refused whole.
      now += 300 // three tokens
      assert.equal((await client.request({ type: 'lookup', hashes: [h('r1'), h('r2'), h('r3'), h('r4')] })).code, 'MGH_ERR_RATE_LIMITED')
      now += 200 // two more (the refused batch's frame took one): four
      assert.deepEqual(Object.keys((await client.request({ type: 'lookup', hashes: [h('r1'), h('r2'), h('r3'), h('r4')] })).found).length, 4)
      // Keeping on over the rate: cut off after rateLimitCloseAfter drops in a row.
      const closed = new Promise((resolve) => client.ws.once('close', (code, reason) => resolve([code, String(reason)])))
      for (let i = 0; i < 25; i++) client.sendRaw('{"type":"nope"}')
      assert.deepEqual(await closed, [1008, 'too many messages; slow down (further ones are dropped unread)'])
      const metrics = await (await fetch(`${coordinator.httpUrl}/metrics`)).text()
      assert.ok(Number(metrics.match(/^maygh_dropped_frames_total (\d+)$/m)?.[1]) >= 25, 'every dropped frame counted')
      assert.match(metrics, /maygh_closes_total\{reason="rate_limited"\} 1/)
    } finally {
      await coordinator.close()
    }
  })

  test('connections past the process cap or the per-address cap are refused at the upgrade; a socket that never joins is closed', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxConnections: 3, maxConnectionsPerIp: 2, joinDeadlineMs: 200 })
    try {
      const a = await TestClient.open(coordinator.url)
      const b = await TestClient.open(coordinator.url)
      await assert.rejects(TestClient.open(coordinator.url), /Unexpected server response: 429/)
      await a.join()
      // a joined; b never does and is closed at the deadline.
      const [code, reason] = await new Promise((resolve) => b.ws.once('close', (c, r) => resolve([c, String(r)])))
      assert.deepEqual([code, reason], [1008, 'no join in time'])
      assert.equal(a.ws.readyState, a.ws.OPEN)
      const lone = await startCoordinator({ port: 0, stunPort: 0, maxConnections: 1 })
      try {
        const first = await TestClient.open(lone.url)
        await assert.rejects(TestClient.open(lone.url), /Unexpected server response: 503/)
        await first.close()
      } finally {
        await lone.close()
      }
      await a.close()
    } finally {
      await coordinator.close()
    }
  })

  test('limits follow the client: one cut off for flooding is refused at once until it has been quiet for a second, a socket\'s bucket is carried to the next, and with join tokens the visitor carries it from another address', async () => {
    let now = 0
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, rateLimitPerSecond: 10, rateLimitBurst: 5, rateLimitCloseAfter: 20 }, { now: () => now })
    const closed = (/** @type {TestClient} */ c) => new Promise((resolve) => c.ws.once('close', (code) => resolve(code)))
    /** @param {TestClient} c @returns {number} its replies so far */
    const replies = (c) => c.inbox.length
    try {
      const first = await TestClient.open(coordinator.url)
      const cut = closed(first)
      for (let i = 0; i < 30; i++) first.sendRaw('{"type":"nope"}')
      assert.equal(await cut, 1008)
      assert.equal(replies(first), 6, 'the burst of 5 and the first drop answered')
      // Back at once (the clock has not moved): refused before anything is read, with the code, for as
      // long as it keeps trying (each attempt counts as one more dropped frame).
      await assert.rejects(TestClient.open(coordinator.url), /Unexpected server response: 429/)
      now += 900
      await assert.rejects(TestClient.open(coordinator.url), /Unexpected server response: 429/)
      // A second's quiet and it is let in, as good as new (what was kept of it is forgotten).
      now += 1001
      const rested = await TestClient.open(coordinator.url)
      assert.equal((await rested.join()).type, 'welcome')
      assert.equal(coordinator.limits.kept.size, 0)
      // Less than a burst's worth, kept: a socket that left 2 tokens starts the next with 2.
      for (let i = 0; i < 2; i++) assert.equal((await rested.request({ type: 'lookup', hash: h('x') })).type, 'holders')
      await rested.close()
      const next = await TestClient.open(coordinator.url)
      for (let i = 0; i < 3; i++) next.sendRaw('{"type":"nope"}')
      assert.deepEqual([(await next.next()).code, (await next.next()).code, (await next.next()).code], ['MGH_ERR_UNKNOWN_TYPE', 'MGH_ERR_UNKNOWN_TYPE', 'MGH_ERR_RATE_LIMITED'])
      await next.close()
    } finally {
      await coordinator.close()
    }
    // Join tokens: the visitor's limit follows it to another address (127.0.0.2 is loopback too).
    const SECRET = 's'.repeat(40)
    const SITE = 'https://shop.example'
    const signed = await startCoordinator({ port: 0, stunPort: 0, tokenSecrets: [SECRET], rateLimitPerSecond: 10, rateLimitBurst: 5, rateLimitCloseAfter: 20 }, { now: () => now })
    try {
      const token = signJoinToken({ origin: SITE, visitor: 'v-9', ttlSeconds: 600 }, SECRET)
      const here = await TestClient.open(signed.url, { origin: SITE })
      assert.equal((await here.request({ type: 'join', have: [], token })).type, 'welcome')
      for (let i = 0; i < 3; i++) assert.equal((await here.request({ type: 'lookup', hash: h('y') })).type, 'holders')
      await here.close()
      const there = await TestClient.open(signed.url, { origin: SITE, localAddress: '127.0.0.2' })
      // Its join is its new address's first frame (a fresh burst there); the visitor's one token left then takes over.
      assert.equal((await there.request({ type: 'join', have: [], token })).type, 'welcome')
      assert.equal((await there.request({ type: 'lookup', hash: h('y') })).type, 'holders')
      there.sendRaw('{"type":"nope"}')
      assert.equal((await there.next()).code, 'MGH_ERR_RATE_LIMITED', 'dropped unread, so answered without a ref')
      await there.close()
    } finally {
      await signed.close()
    }
  })

  test('a TCP connection counts against its address\'s cap until it upgrades or goes, and one that never sends its upgrade is closed after httpTimeoutMs', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxConnectionsPerIp: 3, httpTimeoutMs: 300 })
    try {
      const { port } = new URL(coordinator.httpUrl)
      const raw = await Promise.all(Array.from({ length: 3 }, () => new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => resolve(socket)).on('error', reject)
        socket.resume() // read what comes (the 408), so that its close is seen
      })))
      const started = Date.now()
      // The cap is full of sockets that said nothing: a WebSocket is refused, with the code.
      await assert.rejects(TestClient.open(coordinator.url), /Unexpected server response: 429/)
      // Each silent one is closed by the deadline (looked for every 300 ms here): generous bound.
      await Promise.all(raw.map((socket) => socket.closed ? null : once(socket, 'close')))
      assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`)
      const client = await TestClient.open(coordinator.url)
      assert.equal((await client.join()).type, 'welcome')
      await client.close()
    } finally {
      await coordinator.close()
    }
  })

  test('every HTTP endpoint only reads: other methods get 405 with the code and Allow; HEAD is answered without a body', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
    try {
      for (const [method, path] of [['POST', '/stats'], ['PUT', '/held'], ['DELETE', '/metrics'], ['OPTIONS', '/usage'], ['POST', '/nowhere']]) {
        const res = await fetch(`${coordinator.httpUrl}${path}`, { method })
        assert.equal(res.status, 405, `${method} ${path}`)
        assert.equal(res.headers.get('allow'), 'GET, HEAD')
        assert.equal((await res.json()).error.code, 'MGH_ERR_HTTP_METHOD')
      }
      const head = await fetch(`${coordinator.httpUrl}/stats`, { method: 'HEAD' })
      assert.equal(head.status, 200)
      assert.equal(await head.text(), '')
      assert.equal((await fetch(`${coordinator.httpUrl}/stats`)).status, 200)
    } finally {
      await coordinator.close()
    }
  })

  test('a client that does not read its socket is cut off once its unread bytes pass the cap', async () => {
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxSendBufferBytes: 16 * 1024, rateLimitBurst: 100_000, rateLimitPerSecond: 100_000, introductionSignalBytes: 16 * 2 ** 20 })
    try {
      const slow = await TestClient.open(coordinator.url)
      const sender = await TestClient.open(coordinator.url)
      const { id } = await slow.join([h('slow')])
      await sender.join()
      await sender.request({ type: 'lookup', hash: h('slow') })
      const closed = once(slow.ws, 'close')
      // Stop reading: the kernel's buffers fill, then the coordinator's.
      const socket = /** @type {import('node:net').Socket} */ (/** @type {any} */ (slow.ws)._socket)
      socket.pause()
      const signal = { cid: 'x', blob: 'y'.repeat(50_000) }
      for (let i = 0; i < 400 && coordinator.sessions.has(id); i++) {
        sender.sendRaw(JSON.stringify({ type: 'connect', to: id, signal }))
        if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await peerRemovedById(coordinator, id)
      socket.resume()
      await closed
      assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /maygh_closes_total\{reason="slow_reader"\} 1/)
      await sender.close()
    } finally {
      await coordinator.close()
    }
  })

  test('holdings are capped per coordinator; signals too deep are refused; a bad bus message never throws', async () => {
    const store = new MemoryStore()
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, maxHoldings: 3 }, { store })
    try {
      const a = await TestClient.open(coordinator.url)
      const b = await TestClient.open(coordinator.url)
      const { id: idA } = await a.join([h('1'), h('2')])
      assert.equal((await b.join([h('3'), h('4')])).code, 'MGH_ERR_CAPACITY')
      const { id: idB } = await b.join([h('3')])
      assert.equal((await b.request({ type: 'update', add: [h('4')] })).code, 'MGH_ERR_CAPACITY')
      assert.equal((await b.request({ type: 'update', add: [h('4')], remove: [h('3')] })).holding, 1, 'a swap does not grow')
      await a.close()
      await peerRemovedById(coordinator, idA)
      assert.equal((await b.request({ type: 'update', add: [h('5'), h('6')] })).holding, 3, 'room again once A left')

      let deep = {}
      for (let i = 0; i < 20; i++) deep = { d: deep }
      assert.equal((await b.request({ type: 'connect', to: idB.replace(/.$/, 'Q'), signal: deep })).code, 'MGH_ERR_BAD_FIELD')

      const c = await TestClient.open(coordinator.url)
      const { id: idC } = await c.join()
      for (const bad of [null, 7, 'x', [], { to: idC }, { to: idC, from: 'nope', signal: {} }, { to: idC, from: idB, signal: deep }, { to: 5, from: idB, signal: {} }]) {
        await store.publish(coordinator.shard, /** @type {any} */ (bad))
      }
      await store.publish(coordinator.shard, { to: idC, from: idB, signal: { ok: 1 } })
      assert.deepEqual(await c.next(), { type: 'connect', from: idB, signal: { ok: 1 }, introduced: true })
      assert.equal(coordinator.counters.busRejected, 8)
      await Promise.all([b.close(), c.close()])
    } finally {
      await coordinator.close()
    }
  })

  test('a peer that stops answering pings is removed; a busy one is never pinged', async () => {
    // The test runs the heartbeat's rounds itself (the hourly interval never comes
    // round) and waits on the pong and the close, not on time.
    const coordinator = await startCoordinator({ port: 0, stunPort: 0, pingIntervalMs: 3_600_000 })
    const heartbeat = /** @type {import('../src/heartbeat.js').Heartbeat} */ (coordinator.heartbeat)
    try {
      const silent = await TestClient.open(coordinator.url, { autoPong: false })
      const asker = await TestClient.open(coordinator.url)
      const { id } = await silent.join([h('s')])
      const { id: askerId } = await asker.join()
      assert.deepEqual((await asker.request({ type: 'lookup', hash: h('s') })).peers, [id])
      const askerSocket = /** @type {import('ws').WebSocket} */ (coordinator.sessions.get(askerId)?.ws)
      const silentSession = /** @type {import('../src/session.js').Session} */ (coordinator.sessions.get(id))
      await heartbeat.tick() // both sent messages since the last round: nothing sent
      assert.equal(silentSession.pinged, false, 'a busy socket is not pinged')
      const pong = once(askerSocket, 'pong', { signal: AbortSignal.timeout(5000) })
      await heartbeat.tick() // both silent since: pinged
      assert.equal(silentSession.pinged, true)
      await pong
      const removed = peerRemoved(coordinator, id)
      await heartbeat.tick() // the silent one missed its ping: cut off
      await removed
      assert.deepEqual((await asker.request({ type: 'lookup', hash: h('s') })).peers, [])
      // The polite client, answering pings, is still there.
      assert.deepEqual([...coordinator.sessions.keys()], [askerId])
      await asker.close()
    } finally {
      await coordinator.close()
    }
  })

  test('close() tells clients to reconnect (1012), empties the store and leaves the registry', async () => {
    const store = new MemoryStore()
    const coordinator = await startCoordinator({ port: 0, stunPort: 0 }, { store })
    const client = await TestClient.open(coordinator.url)
    const { id } = await client.join([h('c')])
    assert.deepEqual(coordinator.stats().holdings, 1)
    const closed = new Promise((resolve) => client.ws.once('close', (code) => resolve(code)))
    await coordinator.close()
    assert.equal(await closed, 1012)
    assert.equal(await store.getPeer(id), null)
    assert.deepEqual(await sample(store, h('c'), 10), [])
    assert.equal(store.isLive(coordinator.shard), false)
  })
})
