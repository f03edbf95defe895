/**
 * Scenario 6: one full A → B run with the coordinator on the Redis store
 * (a real redis-server child).
 */
import { test, before, after } from 'node:test'
import { startRedisServer } from '../support/redis-server.js'
import { startStack, assertPeerShare } from '../support/browsers.js'

/** @type {Awaited<ReturnType<typeof startRedisServer>>} */
let redis
/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack
before(async () => {
  redis = await startRedisServer()
  stack = await startStack({ redisUrl: redis.url })
})
after(async () => {
  await stack?.close()
  await redis?.close()
})

test('Redis store: B gets ≥ 90 % of image bytes from A', { timeout: 120000 }, () => assertPeerShare(stack, 'chromium', 'chromium'))
