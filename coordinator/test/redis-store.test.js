import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { RedisStore } from '../src/store/redis-store.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { storeContract, expiryContract } from './store-contract.js'

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

/** @param {{ peerTtlMs?: number, now?: () => number }} [options] */
async function freshStore (options = {}) {
  await admin.flushall()
  const store = new RedisStore({ url: server.url, peerTtlMs: 60000, ...options })
  await store.connect()
  return store
}

storeContract('RedisStore', () => freshStore(), { batched: true })
expiryContract('RedisStore', freshStore)

test('RedisStore: connect fails fast with a clear error when Redis is down', async () => {
  const store = new RedisStore({ url: 'redis://127.0.0.1:1', peerTtlMs: 1000 })
  const redis = /** @type {import('ioredis').Redis} */ (store.redis)
  redis.options.retryStrategy = () => null
  await assert.rejects(store.connect(), /ECONNREFUSED|Connection is closed/)
  redis.disconnect()
})
