/**
 * The store contract, and two coordinator shards, on a real 6-node Redis Cluster.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { Cluster } from 'ioredis'
import { RedisStore, parseClusterUrl } from '../src/store/redis-store.js'
import { startCoordinator } from '../src/server.js'
import { startRedisCluster } from '../../test/support/redis-cluster.js'
import { storeContract, h, peerRemoved } from './store-contract.js'
import { TestClient } from './test-client.js'

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

test('a master killed: coordinators keep answering, and after the failover lookups find holders again', async () => {
  await Promise.all(admin.nodes('master').map((node) => node.flushall()))
  const fast = { port: 0, stunPort: 0, redisUrl: cluster.url, storeTimeoutMs: 500 }
  const shards = [await startCoordinator({ ...fast, shardId: 'one' }), await startCoordinator({ ...fast, shardId: 'two' })]
  for (const s of shards) s.on('warning', () => {})
  try {
    const a = await TestClient.open(shards[0].url)
    const b = await TestClient.open(shards[1].url)
    const { id: idA } = await a.join([h('f1')])
    await b.join()
    assert.deepEqual((await b.request({ type: 'lookup', hash: h('f1') })).peers, [idA])
    // The master that holds the asset's holder list.
    const slot = Number(await admin.cluster('KEYSLOT', `mgh:h:{${h('f1')}}`))
    const [host, port] = String(admin.slots[slot][0]).split(':')
    const victim = cluster.servers.find((s) => s.port === Number(port))
    assert.ok(victim && host, 'found the master')
    await victim.close()
    // Every request is answered while the replica takes over (cluster-node-timeout 5 s).
    const deadline = Date.now() + 30_000
    let found = false
    while (!found && Date.now() < deadline) {
      const started = Date.now()
      const reply = await b.request({ type: 'lookup', hash: h('f1') })
      assert.equal(reply.type, 'holders', 'a lookup is always answered')
      assert.ok(Date.now() - started < 5000, 'in bounded time')
      found = reply.peers[0] === idA
      if (!found) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.ok(found, 'holders found again after the failover')
    // Changes work again too, once the client has learnt every slot's new master
    // (a change may touch slots other than the one the lookup read): retried until then.
    let updated
    for (let tries = 0; tries < 50 && updated?.type !== 'updated'; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 200))
      updated = await a.request({ type: 'update', add: [h('f2')] })
      assert.ok(updated.type === 'updated' || updated.code === 'MGH_ERR_STORE', JSON.stringify(updated))
    }
    assert.equal(updated.type, 'updated', JSON.stringify(updated))
    await Promise.all([a.close(), b.close()])
  } finally {
    await Promise.all(shards.map((s) => s.close()))
  }
})
