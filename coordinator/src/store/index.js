/**
 * Picks and opens the store the configuration names: Redis when `redisUrl` is
 * set, the in-process store otherwise.
 */
import { MemoryStore } from './memory-store.js'
import { RedisStore } from './redis-store.js'

/**
 * @param {{ redisUrl: string | null, storeTimeoutMs: number }} config
 * @returns {Promise<import('./store.js').Store>}
 */
export async function openStore ({ redisUrl, storeTimeoutMs }) {
  if (redisUrl === null) return new MemoryStore()
  const store = new RedisStore({ url: redisUrl, timeoutMs: storeTimeoutMs })
  try {
    await store.connect()
  } catch (err) {
    await store.close()
    throw err
  }
  return store
}

export { MemoryStore, RedisStore }
