/**
 * Redis store: the client map and content-location map shared by every
 * coordinator shard, and Redis pub/sub as the bus between shards.
 *
 * Works on one Redis (`redis://…`) and on Redis Cluster (`redis+cluster://host:port,…`,
 * any subset of the nodes). Keys (hash tags keep keys used together in one slot):
 *   mgh:p:{<peer>}     HASH  s = shard, j = joinedAt, c = lastChosen,
 *                            e = expiresAt                            (expires unless touched)
 *   mgh:p:{<peer>}:a   SET   hashes the peer holds                       (expires with it)
 *   mgh:h:{<hash>}     SET   ids of the peers holding the asset
 *   mgh:{n}:peers, mgh:{n}:holdings   counters for /stats
 *   mgh:bus:<shard>    pub/sub channel of one coordinator
 *
 * Peer records expire `peerTtlMs` after the last touch, so a coordinator that
 * dies without cleaning up leaves nothing that lookups hand out for long:
 * `sampleHolders` checks every candidate's record and drops the dead ones.
 * The store's clock (`now`, wall-clock ms: shards compare each other's
 * timestamps) decides expiry through `e`, so a test moves time instead of
 * waiting it out; Redis's own TTL, the same span, only reclaims the memory. A
 * record without `e` (written before it existed) lives by its Redis TTL alone.
 * Every operation is one batch of commands sent together: a pipeline on one
 * Redis, auto-pipelined per node on a Cluster (one round trip to each node the
 * keys live on). Removing a peer whose assets are unknown, and a lookup, take two.
 */
import { Cluster, Redis } from 'ioredis'
import { backoffDelay } from '../../../protocol/index.js'

/** @typedef {import('./store.js').Store} Store */

const PREFIX = 'mgh:'
const peerKey = (/** @type {string} */ id) => `${PREFIX}p:{${id}}`
const assetsKey = (/** @type {string} */ id) => `${PREFIX}p:{${id}}:a`
const holdersKey = (/** @type {string} */ hash) => `${PREFIX}h:{${hash}}`
const PEERS_COUNT = `${PREFIX}{n}:peers`
const HOLDINGS_COUNT = `${PREFIX}{n}:holdings`
const busChannel = (/** @type {string} */ shard) => `${PREFIX}bus:${shard}`
/** touches per pipeline, so one huge shard does not build one huge command buffer */
const TOUCH_CHUNK = 1000

/** Sets lastChosen only on a record that still exists (HSET would resurrect an expired peer without a TTL). */
const MARK_CHOSEN_LUA = "if redis.call('exists', KEYS[1]) == 1 then redis.call('hset', KEYS[1], 'c', ARGV[1]) end return 0"
/** Extends a record that still exists (and its asset set: same hash tag, same slot); a gone peer stays gone. */
const TOUCH_LUA = "if redis.call('pexpire', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], 'e', ARGV[2]) redis.call('pexpire', KEYS[2], ARGV[1]) end return 0"

/**
 * @param {string | null | undefined} expiresAt a record's `e`
 * @param {number} now
 * @returns {boolean} whether the record has expired by the store's clock
 */
const expired = (expiresAt, now) => expiresAt != null && Number(expiresAt) <= now

/**
 * Reconnect delay for ioredis: the project's one backoff (capped exponential
 * with jitter), from 50 ms up to 5 s.
 * @param {number} times attempts so far (ioredis starts at 1)
 * @returns {number} ms
 */
function redisRetryDelay (times) {
  return Math.round(backoffDelay(times, { baseMs: 50, maxMs: 5000 }))
}

/**
 * Cluster seed nodes from a `redis+cluster://[user:pass@]host:port,host:port` URL, or null for a plain URL.
 * @param {string} url
 * @returns {{ nodes: { host: string, port: number }[], username?: string, password?: string } | null}
 */
export function parseClusterUrl (url) {
  const match = /^redis\+cluster:\/\/(?:([^:@]*)(?::([^@]*))?@)?([^/?#]+)\/?$/.exec(url)
  if (match === null) return null
  const nodes = match[3].split(',').map((address) => {
    const at = address.lastIndexOf(':')
    const port = Number(address.slice(at + 1))
    if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new TypeError(`bad cluster node "${address}" in ${url}`)
    return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port }
  })
  return {
    nodes,
    ...(match[1] ? { username: decodeURIComponent(match[1]) } : {}),
    ...(match[2] ? { password: decodeURIComponent(match[2]) } : {})
  }
}

/** @typedef {[string, ...(string | number)[]]} Command */

/** @implements {Store} */
export class RedisStore {
  /**
   * @param {{ url: string, peerTtlMs: number, now?: () => number }} options
   *   `now`: ms since the epoch, the clock expiry is judged by (default Date.now)
   */
  constructor ({ url, peerTtlMs, now = Date.now }) {
    const cluster = parseClusterUrl(url)
    this.cluster = cluster !== null
    /** @type {Redis | Cluster} */
    this.redis = cluster === null
      ? new Redis(url, { retryStrategy: redisRetryDelay, lazyConnect: true })
      : new Cluster(cluster.nodes, {
        lazyConnect: true,
        // Commands issued in one tick go out together, grouped by node.
        enableAutoPipelining: true,
        clusterRetryStrategy: redisRetryDelay,
        redisOptions: { username: cluster.username, password: cluster.password }
      })
    this.redis.defineCommand('mghMarkChosen', { numberOfKeys: 1, lua: MARK_CHOSEN_LUA })
    this.redis.defineCommand('mghTouch', { numberOfKeys: 2, lua: TOUCH_LUA })
    /** @type {Redis | Cluster | null} */
    this.subscriber = null
    /** @type {Map<string, Set<(message: object) => void>>} */
    this.handlers = new Map()
    this.peerTtlMs = peerTtlMs
    this.now = now
    /** round trips made, for /stats and for the contract test's batching check */
    this.roundTrips = 0
  }

  /** Connect, failing fast with the server's error when Redis is unreachable. */
  async connect () {
    await this.redis.connect()
  }

  /** @type {Store['addPeer']} */
  async addPeer (id, { shard, joinedAt }, assets) {
    /** @type {Command[]} */
    const batch = [
      ['del', peerKey(id), assetsKey(id)],
      ['hset', peerKey(id), 's', shard, 'j', joinedAt, 'c', 0, 'e', this.now() + this.peerTtlMs],
      ['pexpire', peerKey(id), this.peerTtlMs],
      ['incr', PEERS_COUNT]
    ]
    if (assets.length > 0) {
      batch.push(['sadd', assetsKey(id), ...assets], ['pexpire', assetsKey(id), this.peerTtlMs], ['incrby', HOLDINGS_COUNT, assets.length])
      for (const hash of assets) batch.push(['sadd', holdersKey(hash), id])
    }
    await this.#exec(batch)
  }

  /** @type {Store['updatePeer']} */
  async updatePeer (id, added, removed) {
    if (added.length === 0 && removed.length === 0) return
    /** @type {Command[]} */
    const batch = []
    if (removed.length > 0) batch.push(['srem', assetsKey(id), ...removed])
    if (added.length > 0) batch.push(['sadd', assetsKey(id), ...added], ['pexpire', assetsKey(id), this.peerTtlMs])
    for (const hash of removed) batch.push(['srem', holdersKey(hash), id])
    for (const hash of added) batch.push(['sadd', holdersKey(hash), id])
    batch.push(['incrby', HOLDINGS_COUNT, added.length - removed.length])
    await this.#exec(batch)
  }

  /** @type {Store['removePeer']} */
  async removePeer (id, assets) {
    const held = assets ?? /** @type {string[]} */ ((await this.#exec([['smembers', assetsKey(id)]]))[0])
    // The peer record goes first: from then on no lookup returns this peer, even
    // before its holder entries are gone.
    /** @type {Command[]} */
    const batch = [['del', peerKey(id)], ['del', assetsKey(id)]]
    for (const hash of held) batch.push(['srem', holdersKey(hash), id])
    const results = await this.#exec(batch)
    if (results[0] === 1) {
      const removedHoldings = results.slice(2).reduce((n, r) => n + Number(r), 0)
      await this.#exec([['decr', PEERS_COUNT], ['decrby', HOLDINGS_COUNT, removedHoldings]])
    }
  }

  /** @type {Store['touchPeers']} */
  async touchPeers (ids) {
    const expiresAt = this.now() + this.peerTtlMs
    for (let i = 0; i < ids.length; i += TOUCH_CHUNK) {
      await this.#exec(ids.slice(i, i + TOUCH_CHUNK).map((id) => ['mghTouch', peerKey(id), assetsKey(id), this.peerTtlMs, expiresAt]))
    }
  }

  /** @type {Store['sampleHolders']} */
  async sampleHolders (hash, limit) {
    const [ids] = /** @type {[string[]]} */ (await this.#exec([['srandmember', holdersKey(hash), limit]]))
    if (ids.length === 0) return []
    const records = /** @type {[string | null, string | null][]} */ (await this.#exec(ids.map((id) => ['hmget', peerKey(id), 'c', 'e'])))
    const now = this.now()
    /** @type {import('./store.js').Holder[]} */
    const live = []
    const dead = []
    for (let i = 0; i < ids.length; i++) {
      const [chosenAt, expiresAt] = records[i]
      if (chosenAt === null || expired(expiresAt, now)) dead.push(ids[i])
      else live.push({ id: ids[i], lastChosen: Number(chosenAt) })
    }
    // Holders whose record expired (their coordinator died): forget them, off the lookup's path.
    if (dead.length > 0) this.redis.srem(holdersKey(hash), ...dead).catch(() => {})
    return live
  }

  /** @type {Store['markChosen']} */
  async markChosen (ids, at) {
    if (ids.length === 0) return
    await this.#exec(ids.map((id) => ['mghMarkChosen', peerKey(id), at]))
  }

  /** @type {Store['getPeer']} */
  async getPeer (id) {
    const [record, assets] = await this.#exec([['hgetall', peerKey(id)], ['smembers', assetsKey(id)]])
    if (record === null || record.s === undefined || expired(record.e, this.now())) return null
    return { id, shard: record.s, joinedAt: Number(record.j), lastChosen: Number(record.c), assets }
  }

  /** @type {Store['shardOf']} */
  async shardOf (id) {
    const [[shard, expiresAt]] = await this.#exec([['hmget', peerKey(id), 's', 'e']])
    return expired(expiresAt, this.now()) ? null : shard
  }

  /** @type {Store['publish']} */
  async publish (shard, message) {
    await this.#exec([['publish', busChannel(shard), JSON.stringify(message)]])
  }

  /** @type {Store['subscribe']} */
  async subscribe (shard, onMessage) {
    let subscriber = this.subscriber
    if (subscriber === null) {
      // A Redis and a Cluster each duplicate into their own kind; the union's two signatures do not merge.
      subscriber = this.subscriber = this.redis instanceof Cluster ? this.redis.duplicate() : this.redis.duplicate()
      subscriber.on('message', (/** @type {string} */ channel, /** @type {string} */ text) => {
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
      await subscriber.subscribe(channel)
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
    const [[peers, holdings]] = await this.#exec([['mget', PEERS_COUNT, HOLDINGS_COUNT]])
    return { peers: Number(peers ?? 0), holdings: Number(holdings ?? 0) }
  }

  /** @type {Store['close']} */
  async close () {
    this.handlers.clear()
    await Promise.all([this.subscriber, this.redis].map((r) => r?.quit().catch(() => r.disconnect())))
  }

  /**
   * Send a batch of commands together: one pipeline on a single Redis; on a
   * Cluster, auto-pipelining groups them into one write per node. The first
   * failed command rejects, after all have settled.
   * @param {Command[]} commands
   * @returns {Promise<any[]>} each command's result
   */
  async #exec (commands) {
    this.roundTrips++
    if (this.cluster) {
      // commands by name (`redis[name]`): ioredis types each command apart, and these come as data
      const redis = /** @type {any} */ (this.redis)
      const settled = await Promise.allSettled(commands.map(([name, ...args]) => redis[name](...args)))
      for (const r of settled) if (r.status === 'rejected') throw r.reason
      return settled.map((r) => /** @type {PromiseFulfilledResult<any>} */ (r).value)
    }
    const results = /** @type {[Error | null, any][]} */ (await this.redis.pipeline(commands).exec())
    for (const [err] of results) if (err) throw err
    return results.map((r) => r[1])
  }
}
