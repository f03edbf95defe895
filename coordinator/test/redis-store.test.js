import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { RedisStore } from '../src/store/redis-store.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { storeContract, h, pid } from './store-contract.js'

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
