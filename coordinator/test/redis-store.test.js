import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import Redis from 'ioredis'
import { RedisStore } from '../src/store/redis-store.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { storeContract, h } from './store-contract.js'

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

/** @param {number} [peerTtlMs] */
async function freshStore (peerTtlMs = 60000) {
  await admin.flushall()
  const store = new RedisStore({ url: server.url, peerTtlMs })
  await store.connect()
  return store
}

storeContract('RedisStore', () => freshStore(), { batched: true })

test('RedisStore: a peer whose coordinator died expires and is no longer handed out', async () => {
  const store = await freshStore(200)
  try {
    await store.addPeer('alive', { shard: 's', joinedAt: 1 }, [h('a')])
    await store.addPeer('dead', { shard: 'gone', joinedAt: 1 }, [h('a')])
    // Only the live shard keeps touching its peers.
    const touching = setInterval(() => store.touchPeers(['alive']), 50)
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.deepEqual((await store.sampleHolders(h('a'), 10)).map((x) => x.id), ['alive'])
      assert.equal(await store.shardOf('dead'), null)
      // The stale holder entry is cleaned up lazily by the lookup that found it.
      /** @type {string[]} */
      let members = []
      for (let i = 0; i < 50 && (members = await admin.smembers('mgh:h:{' + h('a') + '}')).length !== 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      assert.deepEqual(members, ['alive'])
    } finally {
      clearInterval(touching)
    }
  } finally {
    await store.close()
  }
})

test('RedisStore: connect fails fast with a clear error when Redis is down', async () => {
  const store = new RedisStore({ url: 'redis://127.0.0.1:1', peerTtlMs: 1000 })
  store.redis.options.retryStrategy = () => null
  await assert.rejects(store.connect(), /ECONNREFUSED|Connection is closed/)
  store.redis.disconnect()
})
