import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { RedisStore } from '../src/store/redis-store.js'
import { MAX_BATCH_ARGS } from '../src/store/redis-batch.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { storeContract, h, pid, sample } from './store-contract.js'

/** @type {Awaited<ReturnType<typeof startRedisServer>>} */
let server
/** @type {import('ioredis').Redis} */
let admin

before(async () => {
  server = await startRedisServer()
  admin = new Redis(server.url)
})
after(async () => {
  await admin.quit()
  await server.close()
})

async function freshStore () {
  await admin.flushall()
  const store = new RedisStore({ url: server.url })
  await store.connect()
  return store
}

const info = { url: 'ws://127.0.0.1:1', peers: 0, holdings: 0 }

storeContract('RedisStore', freshStore, { batched: true })

test('RedisStore: a beat says when the store lost this shard\'s data, and not before it was there', async () => {
  const store = await freshStore()
  try {
    assert.equal((await store.beat('sa', info, 60_000)).lost, false, 'a first beat finds nothing, as expected')
    assert.equal((await store.beat('sa', info, 60_000)).lost, false)
    await admin.flushall()
    assert.equal((await store.beat('sa', info, 60_000)).lost, true, 'flushed')
    assert.equal((await store.beat('sa', info, 60_000)).lost, false, 'said once')
    // Only the registry gone (say this shard was declared dead and reaped while cut off).
    await admin.del('mgh:{r}:shards')
    assert.equal((await store.beat('sa', info, 60_000)).lost, true)
  } finally {
    await store.close()
  }
})

test('RedisStore: a reaper stops when the dead shard beats again', async () => {
  const store = await freshStore()
  try {
    await store.beat('sa', info, 60_000)
    await store.beat('sd', info, 100)
    for (let i = 0; i < 450; i++) await store.addPeer(pid('sd', `p${i}`), [h('a')])
    await new Promise((resolve) => setTimeout(resolve, 150))
    assert.deepEqual((await store.beat('sa', info, 60_000)).dead, ['sd'])
    // The shard was only cut off: it beats before the reaper starts.
    await store.beat('sd', info, 60_000)
    await store.reapShard('sd')
    assert.equal(await admin.hlen(`mgh:h:{${h('a')}}`), 450, 'nothing reaped')
  } finally {
    await store.close()
  }
})

test('RedisStore: connect fails fast with a clear error when Redis is down', async () => {
  const store = new RedisStore({ url: 'redis://127.0.0.1:1' })
  const redis = /** @type {import('ioredis').Redis} */ (store.redis)
  redis.options.retryStrategy = () => null
  await assert.rejects(store.connect(), /ECONNREFUSED|Connection is closed/)
  redis.disconnect()
})

test('RedisStore on one Redis: the hot calls of every client in one turn go as one script call, in order; one that fails fails alone', async () => {
  const store = await freshStore()
  try {
    await store.beat('sa', info, 60_000)
    await admin.set(`mgh:h:{${h('broken')}}`, 'not a hash')
    // Script calls Redis ran (the first may be an EVAL, after an EVALSHA of a script not yet loaded is refused).
    const scripts = async () => [...(await admin.info('commandstats')).matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0)
    const calls = await scripts()
    const before = store.roundTrips
    // Two clients' worth of calls made in one turn: a join, a lookup of what it holds, a mark, a
    // lookup that sees the mark, a lookup of a key of the wrong type, a change and a leave.
    const results = await Promise.allSettled([
      store.addPeer(pid('sa', 'p1'), [h('a'), h('b')]),
      sample(store, h('a'), 8),
      store.markChosen([[h('a'), pid('sa', 'p1')]], 42),
      sample(store, h('a'), 8),
      sample(store, h('broken'), 8),
      store.addPeer(pid('sa', 'p2'), [h('a')]),
      store.updatePeer(pid('sa', 'p2'), [h('c')], [h('a')]),
      store.removePeer(pid('sa', 'p1'), [h('a'), h('b')])
    ])
    assert.equal(store.roundTrips - before, 1, 'one script call')
    assert.equal(await scripts() - calls, 1)
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'])
    assert.deepEqual(/** @type {PromiseFulfilledResult<any>} */ (results[1]).value, [{ id: pid('sa', 'p1'), lastChosen: 0 }])
    assert.deepEqual(/** @type {PromiseFulfilledResult<any>} */ (results[3]).value, [{ id: pid('sa', 'p1'), lastChosen: 42 }], 'the mark made before it')
    assert.match(String(/** @type {PromiseRejectedResult} */ (results[4]).reason), /WRONGTYPE/)
    assert.deepEqual(await admin.hgetall(`mgh:h:{${h('a')}}`), {}, 'p2 moved from a to c, p1 left')
    assert.deepEqual(await admin.hgetall(`mgh:h:{${h('c')}}`), { [pid('sa', 'p2')]: '0' })
    assert.deepEqual(await admin.smembers(`mgh:a:{${pid('sa', 'p2')}}`), [h('c')])
    assert.equal(await admin.exists(`mgh:a:{${pid('sa', 'p1')}}`), 0)
    assert.deepEqual(await admin.smembers('mgh:s:{sa}'), [pid('sa', 'p2')])
  } finally {
    await store.close()
  }
})

test('RedisStore on one Redis: a turn that asks more than one script call carries goes as several (3,000 joins at once)', async () => {
  const store = await freshStore()
  try {
    await store.beat('sa', info, 60_000)
    const before = store.roundTrips
    const ids = Array.from({ length: 3_000 }, (_, i) => pid('sa', `p${i}`))
    await Promise.all(ids.map((id, i) => store.addPeer(id, [h(`a${i % 7}`), h('shared')])))
    const calls = store.roundTrips - before
    const args = 13 // per join of 2 assets: its 'j' (4) and its 'c' (9)
    assert.ok(calls >= Math.floor(3_000 * args / MAX_BATCH_ARGS) && calls <= Math.ceil(3_000 * args / MAX_BATCH_ARGS) + 1, `${calls} script calls`)
    assert.equal(await admin.hlen(`mgh:h:{${h('shared')}}`), 3_000)
    assert.equal(await admin.scard('mgh:s:{sa}'), 3_000)
  } finally {
    await store.close()
  }
})
