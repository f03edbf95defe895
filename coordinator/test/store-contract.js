/**
 * The store contract: every Store implementation must pass these tests. Each
 * implementation's test file calls `storeContract` with a factory that returns
 * a fresh, empty store.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

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
    /** @type {object[]} */
    const a = []
    /** @type {object[]} */
    const b = []
    const unsubscribeA = await store.subscribe('shard-a', (m) => a.push(m))
    await store.subscribe('shard-b', (m) => b.push(m))
    await store.publish('shard-a', { to: 'x', from: 'y', signal: { n: 1 } })
    await store.publish('shard-b', { to: 'z', from: 'y', signal: { n: 2 } })
    await waitFor(() => a.length === 1 && b.length === 1)
    assert.deepEqual(a, [{ to: 'x', from: 'y', signal: { n: 1 } }])
    assert.deepEqual(b, [{ to: 'z', from: 'y', signal: { n: 2 } }])
    await unsubscribeA()
    await store.publish('shard-a', { n: 3 })
    await store.publish('shard-b', { n: 4 })
    await waitFor(() => b.length === 2)
    assert.equal(a.length, 1)
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
 * @param {() => boolean} condition
 * @param {number} [tries]
 */
export async function waitFor (condition, tries = 200) {
  for (let i = 0; i < tries; i++) {
    if (condition()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('condition not met in time')
}
