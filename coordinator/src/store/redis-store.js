/**
 * Redis store: the client map and content-location map shared by every
 * coordinator shard, and Redis pub/sub as the bus between shards.
 *
 * Keys (hash tags keep a peer's two keys in one Cluster slot):
 *   mgh:p:{<peer>}     HASH  s = shard, j = joinedAt, c = lastChosen   (expires unless touched)
 *   mgh:p:{<peer>}:a   SET   hashes the peer holds                       (expires with it)
 *   mgh:h:{<hash>}     SET   ids of the peers holding the asset
 *   mgh:n:peers, mgh:n:holdings   counters for /stats
 *   mgh:bus:<shard>    pub/sub channel of one coordinator
 *
 * Peer records expire `peerTtlMs` after the last touch, so a coordinator that
 * dies without cleaning up leaves nothing that lookups hand out for long:
 * `sampleHolders` checks every candidate's record and drops the dead ones.
 * Every operation is one pipelined round trip (removal of a peer whose assets
 * are unknown, and a lookup, take two).
 */
import Redis from 'ioredis'

/** @typedef {import('./store.js').Store} Store */

const PREFIX = 'mgh:'
const peerKey = (/** @type {string} */ id) => `${PREFIX}p:{${id}}`
const assetsKey = (/** @type {string} */ id) => `${PREFIX}p:{${id}}:a`
const holdersKey = (/** @type {string} */ hash) => `${PREFIX}h:{${hash}}`
const PEERS_COUNT = `${PREFIX}n:peers`
const HOLDINGS_COUNT = `${PREFIX}n:holdings`
const busChannel = (/** @type {string} */ shard) => `${PREFIX}bus:${shard}`
/** touches per pipeline, so one huge shard does not build one huge command buffer */
const TOUCH_CHUNK = 1000

/** Sets lastChosen only on a record that still exists (HSET would resurrect an expired peer without a TTL). */
const MARK_CHOSEN_LUA = "if redis.call('exists', KEYS[1]) == 1 then redis.call('hset', KEYS[1], 'c', ARGV[1]) end return 0"

/**
 * Reconnect delay for ioredis: capped exponential backoff with jitter.
 * @param {number} times attempts so far
 * @returns {number} ms
 */
export function redisRetryDelay (times) {
  const capped = Math.min(5000, 50 * 2 ** Math.min(times, 10))
  return Math.round(capped / 2 + Math.random() * capped / 2)
}

/** @implements {Store} */
export class RedisStore {
  /**
   * @param {{ url: string, peerTtlMs: number }} options
   */
  constructor ({ url, peerTtlMs }) {
    /** @type {import('ioredis').Redis} */
    this.redis = new Redis(url, { retryStrategy: redisRetryDelay, lazyConnect: true })
    this.redis.defineCommand('mghMarkChosen', { numberOfKeys: 1, lua: MARK_CHOSEN_LUA })
    /** @type {import('ioredis').Redis | null} */
    this.subscriber = null
    /** @type {Map<string, Set<(message: object) => void>>} */
    this.handlers = new Map()
    this.peerTtlMs = peerTtlMs
    /** round trips made, for /stats and for the contract test's batching check */
    this.roundTrips = 0
  }

  /** Connect, failing fast with the server's error when Redis is unreachable. */
  async connect () {
    await this.redis.connect()
  }

  /** @type {Store['addPeer']} */
  async addPeer (id, { shard, joinedAt }, assets) {
    const p = this.redis.pipeline()
      .del(peerKey(id), assetsKey(id))
      .hset(peerKey(id), 's', shard, 'j', joinedAt, 'c', 0)
      .pexpire(peerKey(id), this.peerTtlMs)
      .incr(PEERS_COUNT)
    if (assets.length > 0) {
      p.sadd(assetsKey(id), ...assets).pexpire(assetsKey(id), this.peerTtlMs).incrby(HOLDINGS_COUNT, assets.length)
      for (const hash of assets) p.sadd(holdersKey(hash), id)
    }
    await this.#exec(p)
  }

  /** @type {Store['updatePeer']} */
  async updatePeer (id, added, removed) {
    if (added.length === 0 && removed.length === 0) return
    const p = this.redis.pipeline()
    if (removed.length > 0) p.srem(assetsKey(id), ...removed)
    if (added.length > 0) p.sadd(assetsKey(id), ...added).pexpire(assetsKey(id), this.peerTtlMs)
    for (const hash of removed) p.srem(holdersKey(hash), id)
    for (const hash of added) p.sadd(holdersKey(hash), id)
    p.incrby(HOLDINGS_COUNT, added.length - removed.length)
    await this.#exec(p)
  }

  /** @type {Store['removePeer']} */
  async removePeer (id, assets) {
    const held = assets ?? /** @type {string[]} */ (await this.#counted(this.redis.smembers(assetsKey(id))))
    // The peer record goes first: from then on no lookup returns this peer, even
    // before its holder entries are gone.
    const p = this.redis.pipeline().del(peerKey(id)).del(assetsKey(id))
    for (const hash of held) p.srem(holdersKey(hash), id)
    const results = await this.#exec(p)
    if (results[0] === 1) {
      const removedHoldings = results.slice(2).reduce((n, r) => n + Number(r), 0)
      await this.#exec(this.redis.pipeline().decr(PEERS_COUNT).decrby(HOLDINGS_COUNT, removedHoldings))
    }
  }

  /** @type {Store['touchPeers']} */
  async touchPeers (ids) {
    for (let i = 0; i < ids.length; i += TOUCH_CHUNK) {
      const p = this.redis.pipeline()
      for (const id of ids.slice(i, i + TOUCH_CHUNK)) p.pexpire(peerKey(id), this.peerTtlMs).pexpire(assetsKey(id), this.peerTtlMs)
      await this.#exec(p)
    }
  }

  /** @type {Store['sampleHolders']} */
  async sampleHolders (hash, limit) {
    const ids = /** @type {string[]} */ (await this.#counted(this.redis.srandmember(holdersKey(hash), limit)))
    if (ids.length === 0) return []
    const p = this.redis.pipeline()
    for (const id of ids) p.hget(peerKey(id), 'c')
    const chosenAt = await this.#exec(p)
    /** @type {import('./store.js').Holder[]} */
    const live = []
    const dead = []
    for (let i = 0; i < ids.length; i++) {
      if (chosenAt[i] === null) dead.push(ids[i])
      else live.push({ id: ids[i], lastChosen: Number(chosenAt[i]) })
    }
    // Holders whose record expired (their coordinator died): forget them, off the lookup's path.
    if (dead.length > 0) this.redis.srem(holdersKey(hash), ...dead).catch(() => {})
    return live
  }

  /** @type {Store['markChosen']} */
  async markChosen (ids, at) {
    if (ids.length === 0) return
    const p = this.redis.pipeline()
    for (const id of ids) /** @type {any} */ (p).mghMarkChosen(peerKey(id), at)
    await this.#exec(p)
  }

  /** @type {Store['getPeer']} */
  async getPeer (id) {
    const [record, assets] = await this.#exec(this.redis.pipeline().hgetall(peerKey(id)).smembers(assetsKey(id)))
    if (record === null || record.s === undefined) return null
    return { id, shard: record.s, joinedAt: Number(record.j), lastChosen: Number(record.c), assets }
  }

  /** @type {Store['shardOf']} */
  async shardOf (id) {
    return this.#counted(this.redis.hget(peerKey(id), 's'))
  }

  /** @type {Store['publish']} */
  async publish (shard, message) {
    await this.#counted(this.redis.publish(busChannel(shard), JSON.stringify(message)))
  }

  /** @type {Store['subscribe']} */
  async subscribe (shard, onMessage) {
    if (this.subscriber === null) {
      this.subscriber = this.redis.duplicate()
      this.subscriber.on('message', (channel, text) => {
        const handlers = this.handlers.get(channel)
        if (handlers === undefined) return
        let message
        try { message = JSON.parse(text) } catch { return }
        for (const handler of handlers) handler(message)
      })
    }
    const channel = busChannel(shard)
    let handlers = this.handlers.get(channel)
    if (handlers === undefined) {
      this.handlers.set(channel, (handlers = new Set()))
      await this.subscriber.subscribe(channel)
    }
    handlers.add(onMessage)
    return async () => {
      handlers.delete(onMessage)
      if (handlers.size === 0 && this.handlers.get(channel) === handlers) {
        this.handlers.delete(channel)
        await this.subscriber?.unsubscribe(channel)
      }
    }
  }

  /** @type {Store['stats']} */
  async stats () {
    const [peers, holdings] = await this.#counted(this.redis.mget(PEERS_COUNT, HOLDINGS_COUNT))
    return { peers: Number(peers ?? 0), holdings: Number(holdings ?? 0) }
  }

  /** @type {Store['close']} */
  async close () {
    this.handlers.clear()
    await Promise.all([this.subscriber, this.redis].map((r) => r?.quit().catch(() => r.disconnect())))
  }

  /**
   * Run a pipeline as one round trip; the first failed command rejects.
   * @param {import('ioredis').ChainableCommander} pipeline
   * @returns {Promise<any[]>} each command's result
   */
  async #exec (pipeline) {
    this.roundTrips++
    const results = /** @type {[Error | null, any][]} */ (await pipeline.exec())
    for (const [err] of results) if (err) throw err
    return results.map((r) => r[1])
  }

  /**
   * @template T
   * @param {Promise<T>} command a single command: one round trip
   * @returns {Promise<T>}
   */
  #counted (command) {
    this.roundTrips++
    return command
  }
}
