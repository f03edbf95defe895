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
const info = (shard = 'shard-a') => ({ shard, joinedAt: 1700000000000 })
const ids = (/** @type {{id: string}[]} */ holders) => holders.map((x) => x.id).sort()

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
    try { await body(store) } finally { await store.close() }
  }

  test(`${name}: a joined peer is in the client map and listed for what it holds`, withStore(async (store) => {
    await store.addPeer('p1', info(), [h('a'), h('b')])
    const peer = await store.getPeer('p1')
    assert.deepEqual({ ...peer, assets: peer?.assets.sort() }, { id: 'p1', shard: 'shard-a', joinedAt: 1700000000000, lastChosen: 0, assets: [h('a'), h('b')].sort() })
    assert.deepEqual(ids(await store.sampleHolders(h('a'), 10)), ['p1'])
    assert.deepEqual(await store.sampleHolders(h('zzz'), 10), [])
    assert.equal(await store.shardOf('p1'), 'shard-a')
    assert.equal(await store.shardOf('nobody'), null)
    assert.equal(await store.getPeer('nobody'), null)
  }))

  test(`${name}: updates add and remove holdings`, withStore(async (store) => {
    await store.addPeer('p1', info(), [h('a')])
    await store.addPeer('p2', info(), [])
    await store.updatePeer('p2', [h('a'), h('b')], [])
    await store.updatePeer('p1', [h('c')], [h('a')])
    assert.deepEqual(ids(await store.sampleHolders(h('a'), 10)), ['p2'])
    assert.deepEqual(ids(await store.sampleHolders(h('b'), 10)), ['p2'])
    assert.deepEqual(ids(await store.sampleHolders(h('c'), 10)), ['p1'])
    assert.deepEqual((await store.getPeer('p1'))?.assets, [h('c')])
    assert.deepEqual(await store.stats(), { peers: 2, holdings: 3 })
  }))

  test(`${name}: a removed peer disappears from every map at once`, withStore(async (store) => {
    await store.addPeer('p1', info(), [h('a'), h('b')])
    await store.addPeer('p2', info(), [h('a')])
    await store.removePeer('p1', [h('a'), h('b')])
    assert.deepEqual(ids(await store.sampleHolders(h('a'), 10)), ['p2'])
    assert.deepEqual(await store.sampleHolders(h('b'), 10), [])
    assert.equal(await store.getPeer('p1'), null)
    assert.equal(await store.shardOf('p1'), null)
    // Without the asset list, the store reads it itself.
    await store.removePeer('p2')
    assert.deepEqual(await store.sampleHolders(h('a'), 10), [])
    assert.deepEqual(await store.stats(), { peers: 0, holdings: 0 })
    // Removing twice is harmless and does not skew the counts.
    await store.removePeer('p2')
    assert.deepEqual(await store.stats(), { peers: 0, holdings: 0 })
  }))

  test(`${name}: sampling is bounded and reaches every holder`, withStore(async (store) => {
    const all = Array.from({ length: 40 }, (_, i) => `peer${i}`)
    for (const id of all) await store.addPeer(id, info(), [h('popular')])
    const seen = new Set()
    for (let i = 0; i < 200; i++) {
      const sample = await store.sampleHolders(h('popular'), 5)
      assert.equal(sample.length, 5)
      assert.equal(new Set(ids(sample)).size, 5, 'no holder twice in one sample')
      for (const { id } of sample) seen.add(id)
    }
    assert.equal(seen.size, all.length)
  }))

  test(`${name}: markChosen records the time and never resurrects a gone peer`, withStore(async (store) => {
    await store.addPeer('p1', info(), [h('a')])
    await store.markChosen(['p1', 'gone'], 1234)
    assert.deepEqual(await store.sampleHolders(h('a'), 10), [{ id: 'p1', lastChosen: 1234 }])
    assert.equal(await store.getPeer('gone'), null)
    await store.touchPeers(['p1'])
    assert.equal((await store.getPeer('p1'))?.lastChosen, 1234)
  }))

  test(`${name}: rejoining under the same id replaces the old record`, withStore(async (store) => {
    await store.addPeer('p1', info('shard-a'), [h('a')])
    await store.addPeer('p1', info('shard-b'), [h('b')])
    assert.equal(await store.shardOf('p1'), 'shard-b')
    assert.deepEqual((await store.getPeer('p1'))?.assets, [h('b')])
  }))

  test(`${name}: the bus delivers to the subscribed shard only`, withStore(async (store) => {
    const a = inbox()
    const b = inbox()
    const unsubscribeA = await store.subscribe('shard-a', a.add)
    await store.subscribe('shard-b', b.add)
    await store.publish('shard-a', { to: 'x', from: 'y', signal: { n: 1 } })
    await store.publish('shard-b', { to: 'z', from: 'y', signal: { n: 2 } })
    await Promise.all([a.until(1), b.until(1)])
    assert.deepEqual(a.messages, [{ to: 'x', from: 'y', signal: { n: 1 } }])
    assert.deepEqual(b.messages, [{ to: 'z', from: 'y', signal: { n: 2 } }])
    await unsubscribeA()
    await store.publish('shard-a', { n: 3 })
    await store.publish('shard-b', { n: 4 })
    // Published after n: 3, so had shard-a still been subscribed, n: 3 would be in by now.
    await b.until(2)
    assert.equal(a.messages.length, 1)
  }))

  if (options.batched) {
    test(`${name}: a join or update of 50 assets (spread over many keys) is one round trip`, withStore(async (store) => {
      const remote = /** @type {import('../src/store/store.js').Store & { roundTrips: number }} */ (store)
      const fifty = Array.from({ length: 50 }, (_, i) => h(`asset${i}`))
      await store.addPeer('p1', info(), [])
      let before = remote.roundTrips
      await store.updatePeer('p1', fifty, [])
      assert.equal(remote.roundTrips - before, 1)
      before = remote.roundTrips
      await store.addPeer('p2', info(), fifty)
      assert.equal(remote.roundTrips - before, 1)
      for (let i = 0; i < 50; i += 7) assert.deepEqual(ids(await store.sampleHolders(h(`asset${i}`), 5)), ['p1', 'p2'])
    }))
  }
}

/**
 * Expiry, for stores whose records outlive a coordinator that dies (Redis): a
 * peer that no shard touches stops being handed out `peerTtlMs` after its last
 * touch. The store's clock is the test's, so time is moved instead of waited
 * out; Redis's own TTL, which reclaims the keys in real time, is read, not
 * waited for. Key names follow redis-store.js.
 * @param {string} name
 * @param {(options: { peerTtlMs: number, now: () => number }) => Promise<import('../src/store/redis-store.js').RedisStore>} makeStore
 */
export function expiryContract (name, makeStore) {
  test(`${name}: a peer whose coordinator died expires and is no longer handed out`, async () => {
    const ttl = 90_000
    let now = 1_700_000_000_000
    const store = await makeStore({ peerTtlMs: ttl, now: () => now })
    const { redis } = store
    const keys = (/** @type {string} */ id) => [`mgh:p:{${id}}`, `mgh:p:{${id}}:a`]
    try {
      await store.addPeer('alive', info('s'), [h('a')])
      await store.addPeer('dead', info('gone'), [h('a')])
      for (const key of keys('dead')) {
        const pttl = await redis.pttl(key)
        assert.ok(pttl > 0 && pttl <= ttl, `${key} has Redis TTL ${pttl}`)
      }
      now += ttl - 1
      assert.deepEqual(ids(await store.sampleHolders(h('a'), 10)), ['alive', 'dead'], 'both live until the TTL is up')
      await store.touchPeers(['alive']) // only the live shard keeps touching its peers
      now += 1
      assert.deepEqual(ids(await store.sampleHolders(h('a'), 10)), ['alive'])
      assert.equal(await store.shardOf('dead'), null)
      assert.equal(await store.getPeer('dead'), null)
      // That lookup forgot the dead holder without waiting (off its path); a later
      // command on the store's own connection runs after it, so this read sees it.
      assert.deepEqual(await redis.smembers(`mgh:h:{${h('a')}}`), ['alive'])
      // Once Redis has reclaimed a record (an expired key reads like a deleted one), it is dropped the same way.
      await store.addPeer('reclaimed', info('gone'), [h('b')])
      await redis.del(...keys('reclaimed'))
      assert.deepEqual(await store.sampleHolders(h('b'), 10), [])
      assert.equal(await store.shardOf('reclaimed'), null)

      // A touch renews Redis's TTL too (shortened here so that the renewal shows).
      for (const key of keys('alive')) await redis.pexpire(key, 10_000)
      await store.touchPeers(['alive'])
      for (const key of keys('alive')) assert.ok(await redis.pttl(key) > 10_000, `${key} renewed`)
      now += ttl - 1
      assert.equal(await store.shardOf('alive'), 's', 'a touch is good for a whole TTL')
      now += 1
      assert.equal(await store.shardOf('alive'), null)

      // Touching a peer that is gone does not bring its keys back.
      await store.removePeer('dead')
      await store.touchPeers(['dead'])
      assert.equal(await redis.exists(...keys('dead')), 0)
    } finally {
      await store.close()
    }
  })
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
