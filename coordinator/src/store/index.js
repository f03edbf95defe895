/**
 * Picks and opens the store the configuration names: Redis when `redisUrl` is
 * set, the in-process store otherwise.
 */
import { MemoryStore } from './memory-store.js'
import { RedisStore } from './redis-store.js'

/**
 * @param {{ redisUrl: string | null, pingIntervalMs: number }} config
 * @returns {Promise<import('./store.js').Store>}
 */
export async function openStore ({ redisUrl, pingIntervalMs }) {
  if (redisUrl === null) return new MemoryStore()
  // A record outlives two missed touches (one per ping interval) before it expires.
  const store = new RedisStore({ url: redisUrl, peerTtlMs: pingIntervalMs * 3 })
  await store.connect()
  return store
}

export { MemoryStore, RedisStore }
