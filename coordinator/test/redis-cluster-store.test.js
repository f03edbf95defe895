/**
 * The store contract, and two coordinator shards, on a real 6-node Redis Cluster
 * (a master's failover: test/e2e/cluster-failover.test.js).
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Cluster } from 'ioredis'
import calculateSlot from 'cluster-key-slot'
import { RedisStore, parseClusterUrl } from '../src/store/redis-store.js'
import { startCoordinator } from '../src/server.js'
import { startRedisCluster } from '../../test/support/redis-cluster.js'
import { storeContract, h, peerRemoved } from './store-contract.js'
import { TestClient } from '../../test/support/test-client.js'

/** @type {Awaited<ReturnType<typeof startRedisCluster>>} */
let cluster
/** @type {import('ioredis').Cluster} */
let admin

before(async () => {
  cluster = await startRedisCluster()
  admin = new Cluster(cluster.nodes)
  // Until it has read the slot map, admin.nodes('master') lists startup nodes that it then drops.
  await once(admin, 'ready')
})
after(async () => {
  await admin.quit()
  await cluster.close()
})

async function freshStore () {
  await Promise.all(admin.nodes('master').map((node) => node.flushall()))
  const store = new RedisStore({ url: cluster.url })
  await store.connect()
  return store
}

storeContract('RedisStore on a Cluster', freshStore, { batched: true })

test('a beat notices any one master losing its data', async () => {
  const info = { url: '', peers: 0, holdings: 0 }
  const store = await freshStore()
  try {
    await store.beat('sa', info, 60_000)
    assert.equal((await store.beat('sa', info, 60_000)).lost, false)
    for (const node of admin.nodes('master')) {
      await node.flushall()
      assert.equal((await store.beat('sa', info, 60_000)).lost, true, `flushed ${node.options.port}`)
      assert.equal((await store.beat('sa', info, 60_000)).lost, false)
    }
  } finally {
    await store.close()
  }
})

test('the registry has a copy on each third of the slots: a shard expired in one copy is live while another says so, and not handed out to reap', async () => {
  const info = { url: '', peers: 0, holdings: 0 }
  const store = await freshStore()
  try {
    const copies = store.registry.copies.map((r) => r.shards)
    assert.equal(copies.length, 3)
    const masters = new Set(copies.map((key) => admin.slots[Number(calculateSlot(key))][0]))
    assert.equal(masters.size, 3, 'each copy on a master of its own')
    await store.beat('sb', info, 60_000)
    // As a copy on a master that failed over late: sb's entry there expired long ago.
    await admin.zadd(copies[0], 1, 'sb')
    const beat = await store.beat('sa', info, 60_000)
    assert.deepEqual(beat.dead, [])
    assert.ok(beat.live.has('sb') && store.isLive('sb'))
    assert.equal(await admin.zscore(store.registry.copies[0].reaping, 'sb') !== null, true, 'that copy still counts it dead (until sb beats again)')
    // Expired in every copy: dead, handed out once.
    await Promise.all(copies.map((key) => admin.zadd(key, 1, 'sb')))
    assert.deepEqual((await store.beat('sa', info, 60_000)).dead, ['sb'])
    assert.equal(store.isLive('sb'), false)
    await store.reapShard('sb')
    for (const r of store.registry.copies) assert.equal(await admin.zscore(r.reaping, 'sb'), null)
  } finally {
    await store.close()
  }
})

test('cluster URLs parse, with credentials and IPv6', () => {
  assert.equal(parseClusterUrl('redis://127.0.0.1:6379'), null)
  assert.deepEqual(parseClusterUrl('redis+cluster://a:1,b:2'), { nodes: [{ host: 'a', port: 1 }, { host: 'b', port: 2 }] })
  assert.deepEqual(parseClusterUrl('redis+cluster://u:p%40ss@[::1]:7000'), { nodes: [{ host: '::1', port: 7000 }], username: 'u', password: 'p@ss' })
  assert.throws(() => parseClusterUrl('redis+cluster://nohost'), TypeError)
})

test('two coordinator shards on the Cluster find and signal each other', async () => {
  await Promise.all(admin.nodes('master').map((node) => node.flushall()))
  const shards = [
    await startCoordinator({ port: 0, stunPort: 0, shardId: 'one', redisUrl: cluster.url }),
    await startCoordinator({ port: 0, stunPort: 0, shardId: 'two', redisUrl: cluster.url })
  ]
  try {
    const a = await TestClient.open(shards[0].url)
    const b = await TestClient.open(shards[1].url)
    const { id: idA } = await a.join([h('c1'), h('c2'), h('c3')])
    const { id: idB } = await b.join()
    assert.deepEqual((await b.request({ type: 'lookup', hash: h('c2') })).peers, [idA])
    b.sendRaw(JSON.stringify({ type: 'connect', to: idA, signal: { cid: 'k', sdp: { type: 'offer', sdp: 'o' } } }))
    assert.deepEqual(await a.next(), { type: 'connect', from: idB, signal: { cid: 'k', sdp: { type: 'offer', sdp: 'o' } }, introduced: true })
    const removed = peerRemoved(shards[0], idA)
    await a.close()
    await removed
    assert.deepEqual((await b.request({ type: 'lookup', hash: h('c2') })).peers, [])
    await b.close()
  } finally {
    await Promise.all(shards.map((s) => s.close()))
  }
})
