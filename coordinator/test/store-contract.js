/**
 * The store contract: every Store implementation must pass these tests. Each
 * implementation's test file calls `storeContract` with a factory that returns
 * a fresh, empty store.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { EventEmitter, once } from 'node:events'

/** @param {string} name @returns {string} an SRI name for a made-up asset */
export const h = (name) => 'sha256-' + createHash('sha256').update(name).digest('base64')
/** @param {string} shard @param {string} name @returns {string} a peer id on `shard` */
export const pid = (shard, name) => `${shard}~${name}`

/**
 * One asset's sample (`sampleHolders` takes a list).
 * @param {import('../src/store/store.js').Store} store
 * @param {string} hash
 * @param {number} limit
 * @returns {Promise<import('../src/store/store.js').Holder[]>}
 */
export const sample = async (store, hash, limit) => (await store.sampleHolders([hash], limit))[0]
const ids = (/** @type {{id: string}[]} */ holders) => holders.map((x) => x.id).sort()
/** @param {number} peers @param {number} holdings @returns {import('../src/store/store.js').ShardInfo} */
const info = (peers = 0, holdings = 0) => ({ url: 'ws://127.0.0.1:1', peers, holdings, draining: false })
/** A TTL that outlives any test: shards beaten with it stay live. */
const LONG = 600_000
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * @param {string} name
 * @param {() => Promise<import('../src/store/store.js').Store>} makeStore
 * @param {{ batched?: boolean }} [options] `batched`: the store is remote and counts
 *   its round trips in `roundTrips`; each change must be one batch of commands
 */
export function storeContract (name, makeStore, options = {}) {
  /** @param {(store: import('../src/store/store.js').Store) => Promise<void>} body */
  const withStore = (body) => async () => {
    const store = await makeStore()
    try {
      await store.beat('sa', info(), LONG)
      await body(store)
    } finally { await store.close() }
  }
  const p1 = pid('sa', 'p1')
  const p2 = pid('sa', 'p2')

  test(`${name}: a joined peer is in the client map and listed for what it holds`, withStore(async (store) => {
    await store.addPeer(p1, [h('a'), h('b')])
    const peer = await store.getPeer(p1)
    assert.deepEqual({ ...peer, assets: peer?.assets.sort() }, { id: p1, shard: 'sa', assets: [h('a'), h('b')].sort() })
    assert.deepEqual(await sample(store, h('a'), 10), [{ id: p1, lastChosen: 0 }])
    assert.deepEqual(await sample(store, h('zzz'), 10), [])
    assert.equal(await store.getPeer(pid('sa', 'nobody')), null)
    assert.equal(await store.hasPeer(p1), true)
    assert.equal(await store.hasPeer(pid('sa', 'nobody')), false)
  }))

  test(`${name}: updates add and remove holdings`, withStore(async (store) => {
    await store.addPeer(p1, [h('a')])
    await store.addPeer(p2, [])
    await store.updatePeer(p2, [h('a'), h('b')], [])
    await store.updatePeer(p1, [h('c')], [h('a')])
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [p2])
    assert.deepEqual(ids(await sample(store, h('b'), 10)), [p2])
    assert.deepEqual(ids(await sample(store, h('c'), 10)), [p1])
    assert.deepEqual((await store.getPeer(p1))?.assets, [h('c')])
  }))

  test(`${name}: a removed peer disappears from every map at once`, withStore(async (store) => {
    await store.addPeer(p1, [h('a'), h('b')])
    await store.addPeer(p2, [h('a')])
    await store.removePeer(p1, [h('a'), h('b')])
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [p2])
    assert.deepEqual(await sample(store, h('b'), 10), [])
    assert.equal(await store.getPeer(p1), null)
    assert.equal(await store.hasPeer(p1), false)
    // Removing twice is harmless.
    await store.removePeer(p1, [h('a'), h('b')])
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [p2])
  }))

  test(`${name}: sampling is bounded and reaches every holder`, withStore(async (store) => {
    const all = Array.from({ length: 40 }, (_, i) => pid('sa', `peer${i}`))
    for (const id of all) await store.addPeer(id, [h('popular')])
    const seen = new Set()
    for (let i = 0; i < 200; i++) {
      const drawn = await sample(store, h('popular'), 5)
      assert.equal(drawn.length, 5)
      assert.equal(new Set(ids(drawn)).size, 5, 'no holder twice in one sample')
      for (const { id } of drawn) seen.add(id)
    }
    assert.equal(seen.size, all.length)
  }))

  test(`${name}: markChosen times the entry for that asset only, and never brings a gone entry back`, withStore(async (store) => {
    await store.addPeer(p1, [h('a'), h('b')])
    await store.markChosen([[h('a'), p1]], 1234)
    await store.markChosen([[h('a'), p2]], 99)
    assert.deepEqual(await sample(store, h('a'), 10), [{ id: p1, lastChosen: 1234 }])
    assert.deepEqual(await sample(store, h('b'), 10), [{ id: p1, lastChosen: 0 }])
    await store.updatePeer(p1, [], [h('b')])
    await store.markChosen([[h('b'), p1]], 5)
    assert.deepEqual(await sample(store, h('b'), 10), [])
    // Listed again (after the store lost data), an entry it still has keeps its time.
    await store.addPeer(p1, [h('a'), h('c')])
    assert.deepEqual(await sample(store, h('a'), 10), [{ id: p1, lastChosen: 1234 }])
    assert.deepEqual(await sample(store, h('c'), 10), [{ id: p1, lastChosen: 0 }])
  }))

  test(`${name}: the registry lists live shards with what they said`, withStore(async (store) => {
    const { live, dead, lost } = await store.beat('sb', info(2, 30), LONG)
    assert.deepEqual([...live.keys()].sort(), ['sa', 'sb'])
    assert.deepEqual(live.get('sb'), info(2, 30))
    assert.deepEqual(dead, [])
    assert.equal(lost, false)
    assert.ok(store.isLive('sb'))
    assert.ok(!store.isLive('sz'))
    assert.deepEqual(store.liveShards(), live)
    await store.leave('sb')
    assert.ok(!store.isLive('sb'))
    assert.deepEqual([...(await store.beat('sa', info(), LONG)).live.keys()], ['sa'])
  }))

  test(`${name}: a shard that stops beating: its peers stop being handed out, one shard reaps it`, withStore(async (store) => {
    const ttl = 300
    await store.beat('sd', info(), ttl)
    const onDead = pid('sd', 'x')
    await store.addPeer(onDead, [h('a'), h('b')])
    await store.addPeer(p1, [h('a')])
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [onDead, p1].sort())
    await sleep(ttl + 50)
    // Gone from lookups at once, before any beat has noticed.
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [p1])
    assert.ok(!store.isLive('sd'))
    const first = await store.beat('sa', info(), LONG)
    assert.deepEqual(first.dead, ['sd'])
    assert.ok(!first.live.has('sd'))
    assert.deepEqual((await store.beat('sa', info(), LONG)).dead, [], 'handed to one beat only')
    await store.reapShard('sd')
    assert.equal(await store.getPeer(onDead), null)
    // Had the shard come back, its holders would be listed again: they are gone.
    await store.beat('sd', info(), LONG)
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [p1])
    assert.deepEqual(await sample(store, h('b'), 10), [])
  }))

  test(`${name}: a dead shard whose name begins a live one's is told apart from it`, withStore(async (store) => {
    const ttl = 300
    await store.beat('sa2', info(), ttl)
    const gone = [pid('sa2', 'q1'), pid('sa2', 'q2')]
    for (const id of [gone[0], p1, gone[1], p2]) await store.addPeer(id, [h('a')])
    assert.deepEqual(ids(await sample(store, h('a'), 10)), [...gone, p1, p2].sort())
    await sleep(ttl + 50)
    for (let i = 0; i < 5; i++) assert.deepEqual(ids(await sample(store, h('a'), 10)), [p1, p2])
  }))

  test(`${name}: the bus delivers to the subscribed shard only`, withStore(async (store) => {
    const a = inbox()
    const b = inbox()
    const unsubscribeA = await store.subscribe('shard-a', a.add)
    await store.subscribe('shard-b', b.add)
    assert.equal(await store.publish('shard-a', { to: 'x', from: 'y', signal: { n: 1 } }), 1, 'reached its one subscription')
    await store.publish('shard-b', { to: 'z', from: 'y', signal: { n: 2 } })
    await Promise.all([a.until(1), b.until(1)])
    assert.deepEqual(a.messages, [{ to: 'x', from: 'y', signal: { n: 1 } }])
    assert.deepEqual(b.messages, [{ to: 'z', from: 'y', signal: { n: 2 } }])
    await unsubscribeA()
    assert.equal(await store.publish('shard-a', { n: 3 }), 0, 'nobody listens as shard-a now')
    await store.publish('shard-b', { n: 4 })
    // Published after n: 3, so had shard-a still been subscribed, n: 3 would be in by now.
    await b.until(2)
    assert.equal(a.messages.length, 1)
  }))

  test(`${name}: reports count distinct reporters within the window; a quarantine lasts its time`, withStore(async (store) => {
    const t = 1_000_000
    assert.equal(await store.report('liar', 'r1', t, 10_000), 1)
    assert.equal(await store.report('liar', 'r1', t + 1, 10_000), 1, 'the same reporter again counts once')
    assert.equal(await store.report('liar', 'r2', t + 2, 10_000), 2)
    assert.equal(await store.report('other', 'r1', t + 3, 10_000), 1, 'per subject')
    assert.equal(await store.report('liar', 'r3', t + 10_001, 10_000), 2, 'r1\'s report has left the window')
    assert.equal(await store.isQuarantined('liar'), false)
    await store.quarantine('liar', 300)
    assert.equal(await store.isQuarantined('liar'), true)
    assert.equal(await store.isQuarantined('other'), false)
    assert.equal(await store.report('liar', 'r4', t + 10_002, 10_000), 1, 'quarantine starts the count afresh')
    await new Promise((resolve) => setTimeout(resolve, 400))
    assert.equal(await store.isQuarantined('liar'), false, 'over')
  }))

  test(`${name}: a usage id is claimed once per site while it is kept, and again once it has expired`, withStore(async (store) => {
    const a = 'https://a.example'
    assert.equal(await store.claimUsage(a, 'id1', 300), true)
    assert.equal(await store.claimUsage(a, 'id1', 300), false, 'the same id again')
    assert.equal(await store.claimUsage('https://b.example', 'id1', 300), true, 'per site')
    assert.equal(await store.claimUsage(a, 'id2', 300), true)
    await new Promise((resolve) => setTimeout(resolve, 400))
    assert.equal(await store.claimUsage(a, 'id1', 300), true, 'expired')
  }))

  test(`${name}: usage adds up per site, per minute and per asset; at most maxSites sites are kept`, withStore(async (store) => {
    const limits = { historyMs: LONG, maxSites: 2 }
    const now = Date.now()
    const minute = now - (now % 60_000)
    const a = 'https://a.example'
    assert.equal(await store.addUsage(a, now, { peer: 100, origin: 50, cache: 0, served: 10 }, [['/x.png', 60], ['/y.png', 40]], limits), true)
    assert.equal(await store.addUsage(a, now, { peer: 30, origin: 0, cache: 5, served: 0 }, [['/y.png', 30]], limits), true)
    assert.equal(await store.addUsage(a, minute - 60_000, { peer: 1, origin: 2, cache: 3, served: 4 }, [], limits), true)
    const u = await store.siteUsage(a, minute - 120_000, 10)
    assert.deepEqual(u.total, { peer: 131, origin: 52, cache: 8, served: 14 })
    assert.deepEqual(u.minutes, [
      { at: minute - 60_000, counts: { peer: 1, origin: 2, cache: 3, served: 4 } },
      { at: minute, counts: { peer: 130, origin: 50, cache: 5, served: 10 } }
    ])
    assert.deepEqual(u.assets, [['/y.png', 70], ['/x.png', 60]], 'assets by the peer bytes they saved, most first')
    assert.deepEqual((await store.siteUsage(a, minute - 120_000, 1)).assets, [['/y.png', 70]])
    assert.deepEqual((await store.siteUsage(a, minute, 0)).minutes.map((m) => m.at), [minute], 'only the minutes from `since` on')
    assert.deepEqual((await store.siteUsage(a, minute, 0)).assets, [])
    assert.equal(await store.addUsage('https://b.example', now, { peer: 1, origin: 0, cache: 0, served: 0 }, [], limits), true)
    assert.equal(await store.addUsage('https://c.example', now, { peer: 1, origin: 0, cache: 0, served: 0 }, [['/z.png', 1]], limits), false, 'a third site is not counted')
    assert.deepEqual((await store.usageSites()).sort(), [a, 'https://b.example'])
    assert.deepEqual(await store.siteUsage('https://c.example', 0, 10), { total: { peer: 0, origin: 0, cache: 0, served: 0 }, minutes: [], assets: [] })
    // Per-minute figures last historyMs; the totals stay.
    await store.addUsage('https://b.example', now, { peer: 5, origin: 0, cache: 0, served: 0 }, [], { historyMs: 200, maxSites: 2 })
    await sleep(400)
    const b = await store.siteUsage('https://b.example', minute, 10)
    assert.deepEqual(b.minutes, [])
    assert.equal(b.total.peer, 6)
  }))

  test(`${name}: every caller gets the same network salt`, withStore(async (store) => {
    const salt = await store.networkSalt()
    assert.match(salt, /^[\w-]{22}$/)
    assert.equal(await store.networkSalt(), salt)
  }))

  if (options.batched) {
    test(`${name}: a join or update of 50 assets (spread over many keys) is one round trip, a lookup one command`, withStore(async (store) => {
      const remote = /** @type {import('../src/store/store.js').Store & { roundTrips: number }} */ (store)
      const fifty = Array.from({ length: 50 }, (_, i) => h(`asset${i}`))
      await store.addPeer(p1, [])
      let before = remote.roundTrips
      await store.updatePeer(p1, fifty, [])
      assert.equal(remote.roundTrips - before, 1)
      before = remote.roundTrips
      await store.addPeer(p2, fifty)
      assert.equal(remote.roundTrips - before, 1)
      before = remote.roundTrips
      for (let i = 0; i < 50; i += 7) assert.deepEqual(ids(await sample(store, h(`asset${i}`), 5)), [p1, p2])
      assert.equal(remote.roundTrips - before, 8)
    }))
  }
}

/** How long a test waits for a message or a close before it fails. */
const EVENT_TIMEOUT_MS = 5000

/** Messages a bus handler received, and a wait for the n-th. */
function inbox () {
  /** @type {object[]} */
  const messages = []
  const arrivals = new EventEmitter()
  return {
    messages,
    add: (/** @type {object} */ message) => { messages.push(message); arrivals.emit('message') },
    /** @param {number} n resolves once `n` messages have arrived */
    async until (n) {
      const signal = AbortSignal.timeout(EVENT_TIMEOUT_MS)
      while (messages.length < n) await once(arrivals, 'message', { signal })
    }
  }
}

/**
 * Resolves once `coordinator` has seen peer `id`'s socket close and taken the
 * peer out of its maps and the store: waits on the socket's `close` and then on
 * the session's queue, where the removal runs. Call it before the socket
 * closes (it finds the session at once) and await it after.
 * @param {import('../src/server.js').Coordinator} coordinator
 * @param {string} id
 */
export async function peerRemoved (coordinator, id) {
  const session = coordinator.sessions.get(id)
  if (session === undefined) throw new Error(`peer ${id} is not joined on this coordinator`)
  // The coordinator's own close listener came first, so once this one runs the removal is queued.
  if (!session.closed) await once(session.ws, 'close', { signal: AbortSignal.timeout(EVENT_TIMEOUT_MS) })
  await session.queue
}
