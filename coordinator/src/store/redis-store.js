/**
 * Redis store: the client map, the content-location map and the shard
 * registry shared by every coordinator shard, and Redis pub/sub as the bus
 * between shards.
 *
 * Works on one Redis (`redis://…`) and on Redis Cluster (`redis+cluster://host:port,…`,
 * any subset of the nodes). Keys (a hash tag keeps keys used together in one slot):
 *   mgh:h:{<hash>}    HASH  holders of an asset: peer id → when a lookup of this asset last chose it (ms, 0 = never)
 *   mgh:a:{<peer>}    SET   hashes a peer holds (what removing it, or reaping its shard, reads)
 *   mgh:s:{<shard>}   SET   ids of the peers joined on a shard (what a reaper walks)
 *   mgh:{r}:…         the shard registry and the sentinels (redis-registry.js)
 *   mgh:{r}:salt      STRING the shards' network salt, expiring each day
 *   mgh:r:{<subject>} ZSET  who reported a visitor: reporter → when (ms); lives one window
 *   mgh:q:{<subject>} STRING a visitor in quarantine, until the key expires
 *   mgh:{r}:sites     SET   the sites with usage (at most UsageLimits.maxSites)
 *   mgh:u:{<site>}:t  HASH  a site's usage totals: source → bytes
 *   mgh:u:{<site>}:m:<minute> HASH a site's usage in one minute (its start, ms): source → bytes; lives historyMs
 *   mgh:u:{<site>}:i  ZSET  the minutes a site has usage in (start → start), what a read of its usage walks
 *   mgh:u:{<site>}:a  ZSET  a site's asset paths by the peer bytes they saved (the top USAGE_ASSETS_KEPT)
 *   mgh:u:{<site>}:r:<id> STRING a usage report's id, counted once: lives USAGE_ID_MS (usage.js)
 *   mgh:bus:{<shard>} pub/sub channel of one coordinator (sharded pub/sub on a Cluster:
 *                     SPUBLISH reaches the one node the channel's slot lives on, not every node)
 *
 * A lookup reads one HRANDFIELD … WITHVALUES: a random sample of the
 * holders with the times the ranking needs; a holder is online when the shard
 * its id names is live, which every shard knows from its last beat, so nothing
 * is read per candidate. On one Redis, the lookups, marks, joins, changes and
 * leaves of every client in one turn of the event loop go as one script call
 * (redis-batch.js). On a Cluster each is a command, or a batch of commands sent
 * together, auto-pipelined (one round trip to each node the keys live on).
 */
import { randomBytes } from 'node:crypto'
import { Cluster, Redis } from 'ioredis'
import { Deadlines } from '../deadlines.js'
import { RedisBatch } from './redis-batch.js'
import { PREFIX, RedisRegistry } from './redis-registry.js'
import { USAGE_SOURCES, backoffDelay, shardOfPeer } from '../../../protocol/index.js'

import { SALT_MS, USAGE_ASSETS_KEPT, USAGE_MINUTE_MS, minuteOf, noUsage } from './store.js'

/** @typedef {import('./store.js').Store} Store */

const holdersKey = (/** @type {string} */ hash) => `${PREFIX}h:{${hash}}`
const assetsKey = (/** @type {string} */ id) => `${PREFIX}a:{${id}}`
const shardPeersKey = (/** @type {string} */ shard) => `${PREFIX}s:{${shard}}`
const SALT = `${PREFIX}{r}:salt`
const busChannel = (/** @type {string} */ shard) => `${PREFIX}bus:{${shard}}`
const reportsKey = (/** @type {string} */ subject) => `${PREFIX}r:{${subject}}`
const quarantineKey = (/** @type {string} */ subject) => `${PREFIX}q:{${subject}}`
const SITES = `${PREFIX}{r}:sites`
const usageKey = (/** @type {string} */ site, /** @type {string} */ part) => `${PREFIX}u:{${site}}:${part}`
/** peers per batch when a reaper walks a dead shard, or a shard lists its peers again */
export const PEER_BATCH = 200

/** Sets an entry's time only if the entry still exists (HSET would bring back a holder that has left). */
const MARK_LUA = "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0"

/**
 * A report (KEYS: the subject's reports; ARGV: reporter, at, window ms): adds
 * or renews the reporter, drops reports older than the window, and returns how
 * many distinct reporters are left; the key lives one window past the last report.
 */
const REPORT_LUA = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return redis.call('ZCARD', KEYS[1])`

/**
 * Reconnect delay for ioredis: the project's one backoff (capped exponential
 * with jitter), from 50 ms up to 2 s.
 * @param {number} times attempts so far (ioredis starts at 1)
 * @returns {number} ms
 */
function redisRetryDelay (times) {
  return Math.round(backoffDelay(times, { baseMs: 50, maxMs: 2000 }))
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

/** @typedef {import('./redis-registry.js').Command} Command */

/**
 * A peer's change as one operation of a batch (redis-batch.js): removals first.
 * @param {string} id
 * @param {readonly string[]} removed
 * @param {readonly string[]} added
 * @returns {import('./redis-batch.js').Operation}
 */
function changeOp (id, removed, added) {
  const hashes = [...removed, ...added]
  return ['c', 3 + 2 * hashes.length, assetsKey(id), id, removed.length, ...hashes.map(holdersKey), ...hashes]
}

/** The store's calls that talk to Redis: each settles within the store's timeout (see the constructor). */
const BOUNDED = /** @type {const} */ (['beat', 'leave', 'reapShard', 'addPeer', 'updatePeer', 'removePeer', 'sampleHolders', 'markChosen', 'hasPeer', 'getPeer', 'report', 'quarantine', 'isQuarantined', 'networkSalt', 'addUsage', 'siteUsage', 'usageSites', 'publish'])

/**
 * @param {number} ms
 * @returns {() => Error} the error of a store call not answered within `ms`
 */
const lateError = (ms) => () => new Error(`the store did not answer within ${ms} ms`)

/** @implements {Store} */
export class RedisStore {
  /**
   * @param {{ url: string, timeoutMs?: number }} options
   *   `timeoutMs`: a command not answered by then fails (the coordinator replies
   *   at once instead of waiting for a Redis that is stalled or gone)
   */
  constructor ({ url, timeoutMs = 1000 }) {
    const cluster = parseClusterUrl(url)
    this.cluster = cluster !== null
    this.failsInParts = this.cluster
    const common = {
      lazyConnect: true,
      commandTimeout: timeoutMs,
      // While disconnected, commands fail at once rather than queue behind the reconnect.
      enableOfflineQueue: false,
      // A command cut off by a lost connection fails; it is not sent again behind its caller's back.
      maxRetriesPerRequest: 0
    }
    /** @type {Redis | Cluster} */
    this.redis = cluster === null
      ? new Redis(url, { ...common, retryStrategy: redisRetryDelay, enableAutoPipelining: true })
      : new Cluster(cluster.nodes, {
        lazyConnect: true,
        // Commands issued in one tick go out together, grouped by node.
        enableAutoPipelining: true,
        // The bus: one subscriber connection per master, each channel on the master its slot lives on.
        shardedSubscribers: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: redisRetryDelay,
        redisOptions: { ...common, username: cluster.username, password: cluster.password }
      })
    this.redis.defineCommand('mghMark', { numberOfKeys: 1, lua: MARK_LUA })
    this.redis.defineCommand('mghReport', { numberOfKeys: 1, lua: REPORT_LUA })
    /** @type {RedisBatch | null} on one Redis, the hot calls of each turn of the event loop as one script call */
    this.batch = this.redis instanceof Redis ? new RedisBatch(this.redis, () => { this.roundTrips++ }) : null
    quietErrors(this.redis)
    /** @type {Redis | Cluster | null} */
    this.subscriber = null
    /** @type {Promise<Redis | Cluster> | null} */
    this.subscribing = null
    /** @type {Map<string, Set<(message: unknown) => void>>} */
    this.handlers = new Map()
    this.registry = new RedisRegistry(this.redis, (commands, inParts) => this.#settle(commands, inParts))
    /** the registry as of the last beat (RedisRegistry): a lookup's holders are on live shards */
    this.shards = this.registry.shards
    /** round trips made, for the contract test's batching check */
    this.roundTrips = 0
    // ioredis times a command from when it is sent, and an auto-pipelined command waits unsent behind
    // the pipeline before it: with Redis stalled, commands failed 1-2.5 s after a 1 s timeout. Each
    // call here settles within timeoutMs of being made, whatever its commands are doing.
    // One timer for all the calls in flight (deadlines.js), and one for the parts of a batch (#settle).
    const calls = new Deadlines(timeoutMs)
    /** @type {Set<() => void>} told of each call abandoned (onLate) */
    this.lateListeners = new Set()
    const lateCall = lateError(timeoutMs)
    const late = () => {
      for (const listener of this.lateListeners) listener()
      return lateCall()
    }
    /** what one command of a beat or a registry read may take (#settle) */
    this.parts = new Deadlines(timeoutMs / 2)
    this.partLate = lateError(timeoutMs / 2)
    const self = /** @type {Record<string, (...args: any[]) => Promise<unknown>>} */ (/** @type {unknown} */ (this))
    for (const name of BOUNDED) {
      const method = self[name]
      self[name] = (...args) => calls.bound(method.apply(this, args), late)
    }
  }

  /** @type {Store['onLate']} */
  onLate (listener) {
    this.lateListeners.add(listener)
    return () => { this.lateListeners.delete(listener) }
  }

  /** Connect, failing fast with the server's error when Redis is unreachable. */
  async connect () {
    await this.redis.connect()
  }

  /** @type {Store['beat']} */
  beat (shard, info, ttlMs) {
    return this.registry.beat(shard, info, ttlMs)
  }

  /** @type {Store['refresh']} */
  refresh () {
    return this.registry.refresh()
  }

  /** @type {Store['isLive']} */
  isLive (shard) {
    return this.registry.isLive(shard)
  }

  /** @type {Store['liveShards']} */
  liveShards () {
    return this.registry.liveShards()
  }

  /** @type {Store['leave']} */
  async leave (shard) {
    const settled = await this.#settle([['del', shardPeersKey(shard)], ...this.registry.leaving(shard)])
    // A copy left behind expires like the entry of a shard that died.
    if (settled.every((r) => r.status === 'rejected')) throw /** @type {PromiseRejectedResult} */ (settled[0]).reason
  }

  /** @type {Store['reapShard']} */
  async reapShard (shard) {
    // The copy that handed this shard out as dead holds the lease this reaper works under.
    const reaping = this.registry.reapingKey(shard)
    for (;;) {
      // Stop when the shard came back (its beat took it out of `reaping`) or another reaper finished.
      const [still, ids] = await this.#exec([['zscore', reaping, shard], ['srandmember', shardPeersKey(shard), PEER_BATCH]])
      if (still === null) return
      if (ids.length === 0) break
      const held = await this.#exec(ids.map((/** @type {string} */ id) => ['smembers', assetsKey(id)]))
      /** @type {Command[]} */
      const batch = []
      for (let i = 0; i < ids.length; i++) {
        for (const hash of held[i]) batch.push(['hdel', holdersKey(hash), ids[i]])
        batch.push(['del', assetsKey(ids[i])])
      }
      batch.push(['srem', shardPeersKey(shard), ...ids])
      await this.#exec(batch)
    }
    // Out of every copy's `reaping` that answers; a copy that does not hands it out again later, and that reaper finds nothing left.
    await this.#settle([['del', shardPeersKey(shard)], ...this.registry.reaped(shard)])
  }

  /** @type {Store['addPeer']} */
  async addPeer (id, assets) {
    if (this.batch !== null) {
      await this.batch.run(['j', 2, shardPeersKey(shardOfPeer(id)), id], changeOp(id, [], assets))
      return
    }
    /** @type {Command[]} */
    const batch = [['sadd', shardPeersKey(shardOfPeer(id)), id]]
    if (assets.length > 0) batch.push(['sadd', assetsKey(id), ...assets])
    for (const hash of assets) batch.push(['hsetnx', holdersKey(hash), id, 0])
    await this.#exec(batch)
  }

  /** @type {Store['updatePeer']} */
  async updatePeer (id, added, removed) {
    if (added.length === 0 && removed.length === 0) return
    if (this.batch !== null) {
      await this.batch.run(changeOp(id, removed, added))
      return
    }
    /** @type {Command[]} */
    const batch = []
    if (removed.length > 0) batch.push(['srem', assetsKey(id), ...removed])
    if (added.length > 0) batch.push(['sadd', assetsKey(id), ...added])
    for (const hash of removed) batch.push(['hdel', holdersKey(hash), id])
    for (const hash of added) batch.push(['hsetnx', holdersKey(hash), id, 0])
    await this.#exec(batch)
  }

  /** @type {Store['removePeer']} */
  async removePeer (id, assets) {
    if (this.batch !== null) {
      await this.batch.run(changeOp(id, assets, []), ['l', 3, shardPeersKey(shardOfPeer(id)), id, assetsKey(id)])
      return
    }
    /** @type {Command[]} */
    const batch = [['srem', shardPeersKey(shardOfPeer(id)), id], ['del', assetsKey(id)]]
    for (const hash of assets) batch.push(['hdel', holdersKey(hash), id])
    await this.#exec(batch)
  }

  /** @type {Store['sampleHolders']} */
  async sampleHolders (hashes, limit) {
    /** @type {string[][]} each hash's HRANDFIELD … WITHVALUES: id, time, id, time… */
    let samples
    if (this.batch !== null) {
      samples = /** @type {string[][]} */ (await this.batch.run(...hashes.map((hash) => ['s', 2, holdersKey(hash), limit])))
    } else {
      this.roundTrips++
      samples = /** @type {string[][]} */ (await Promise.all(hashes.map((hash) => this.redis.hrandfield(holdersKey(hash), limit, 'WITHVALUES'))))
    }
    // A shard started since the last beat (or a dead one not yet reaped): read
    // the registry first; reads are shared and spaced out (refresh()).
    if (samples.some((fields) => fields.some((id, i) => i % 2 === 0 && !this.shards.has(shardOfPeer(id))))) await this.refresh()
    const now = Date.now()
    return samples.map((fields) => {
      /** @type {import('./store.js').Holder[]} */
      const live = []
      for (let i = 0; i < fields.length; i += 2) {
        const entry = this.shards.get(shardOfPeer(fields[i]))
        if (entry !== undefined && entry.expiresAt > now) live.push({ id: fields[i], lastChosen: Number(fields[i + 1]) })
      }
      return live
    })
  }

  /** @type {Store['markChosen']} */
  async markChosen (choices, at) {
    if (choices.length === 0) return
    if (this.batch !== null) {
      await this.batch.run(...choices.map(([hash, id]) => ['m', 3, holdersKey(hash), id, at]))
      return
    }
    this.roundTrips++
    const redis = /** @type {any} */ (this.redis)
    await Promise.all(choices.map(([hash, id]) => redis.mghMark(holdersKey(hash), id, at)))
  }

  /** @type {Store['hasPeer']} */
  async hasPeer (id) {
    this.roundTrips++
    return await this.redis.sismember(shardPeersKey(shardOfPeer(id)), id) === 1
  }

  /** @type {Store['getPeer']} */
  async getPeer (id) {
    const shard = shardOfPeer(id)
    const [listed, assets] = await this.#exec([['sismember', shardPeersKey(shard), id], ['smembers', assetsKey(id)]])
    return listed === 1 ? { id, shard, assets } : null
  }

  /** @type {Store['report']} */
  async report (subject, reporter, at, windowMs) {
    this.roundTrips++
    return Number(await /** @type {any} */ (this.redis).mghReport(reportsKey(subject), reporter, at, windowMs))
  }

  /** @type {Store['quarantine']} */
  async quarantine (subject, ms) {
    await this.#exec([['set', quarantineKey(subject), '1', 'PX', ms], ['del', reportsKey(subject)]])
  }

  /** @type {Store['isQuarantined']} */
  async isQuarantined (subject) {
    this.roundTrips++
    return await this.redis.exists(quarantineKey(subject)) === 1
  }

  /** @type {Store['networkSalt']} */
  async networkSalt () {
    // The first shard to ask each day sets it; every shard reads the one that won.
    const [, salt] = await this.#exec([['set', SALT, randomBytes(16).toString('base64url'), 'PX', SALT_MS, 'NX'], ['get', SALT]])
    return String(salt)
  }

  /** @type {Store['addUsage']} */
  async addUsage (site, at, counts, assets, { historyMs, maxSites }) {
    const [member, sites] = await this.#exec([['sismember', SITES, site], ['scard', SITES]])
    if (member !== 1 && sites >= maxSites) return false
    const minute = usageKey(site, `m:${minuteOf(at)}`)
    /** @type {Command[]} */
    const commands = member === 1 ? [] : [['sadd', SITES, site]]
    for (const source of USAGE_SOURCES) {
      if (counts[source] === 0) continue
      commands.push(['hincrby', usageKey(site, 't'), source, counts[source]], ['hincrby', minute, source, counts[source]])
    }
    commands.push(['pexpire', minute, historyMs])
    // The index of the site's minutes, trimmed to those still kept: what siteUsage reads first.
    commands.push(['zadd', usageKey(site, 'i'), minuteOf(at), minuteOf(at)], ['zremrangebyscore', usageKey(site, 'i'), '-inf', `(${Date.now() - historyMs - USAGE_MINUTE_MS}`], ['pexpire', usageKey(site, 'i'), historyMs + USAGE_MINUTE_MS])
    for (const [path, bytes] of assets) commands.push(['zincrby', usageKey(site, 'a'), bytes, path])
    if (assets.length > 0) commands.push(['zremrangebyrank', usageKey(site, 'a'), 0, -USAGE_ASSETS_KEPT - 1])
    await this.#exec(commands)
    return true
  }

  /** @type {Store['siteUsage']} */
  async siteUsage (site, since, top) {
    // The minutes with usage from `since` on (the index), then one pipelined read each, all in the
    // site's slot: a `since` long ago costs no more than the minutes kept.
    const starts = (await this.redis.zrangebyscore(usageKey(site, 'i'), minuteOf(since), '+inf')).map(Number)
    /** @type {Command[]} */
    const commands = [['hgetall', usageKey(site, 't')], ['zrevrange', usageKey(site, 'a'), 0, Math.max(0, top) - 1, 'WITHSCORES'], ...starts.map((m) => /** @type {Command} */ (['hgetall', usageKey(site, `m:${m}`)]))]
    const [total, all, ...minutes] = await this.#exec(commands)
    // ZREVRANGE 0 -1 is every member: none wanted when top is 0.
    const ranked = top > 0 ? all : []
    /** @param {Record<string, string>} hash */
    const countsOf = (hash) => Object.fromEntries(USAGE_SOURCES.map((source) => [source, Number(hash[source] ?? 0)]))
    /** @type {[string, number][]} */
    const assets = []
    for (let i = 0; i < ranked.length; i += 2) assets.push([ranked[i], Number(ranked[i + 1])])
    return {
      total: /** @type {any} */ ({ ...noUsage(), ...countsOf(total) }),
      minutes: starts.map((at, i) => ({ at, counts: /** @type {any} */ (countsOf(minutes[i])) })).filter((_, i) => Object.keys(minutes[i]).length > 0),
      assets
    }
  }

  /** @type {Store['usageSites']} */
  async usageSites () {
    this.roundTrips++
    return this.redis.smembers(SITES)
  }

  /** @type {Store['claimUsage']} */
  async claimUsage (site, id, ms) {
    this.roundTrips++
    return await this.redis.set(usageKey(site, `r:${id}`), '1', 'PX', ms, 'NX') === 'OK'
  }

  /** @type {Store['publish']} */
  async publish (shard, message) {
    this.roundTrips++
    const channel = busChannel(shard)
    const text = JSON.stringify(message)
    // Both count the subscriptions reached; SPUBLISH's count is exact on a Cluster too.
    return Number(await (this.redis instanceof Cluster ? this.redis.spublish(channel, text) : this.redis.publish(channel, text)))
  }

  /** @type {Store['subscribe']} */
  async subscribe (shard, onMessage) {
    this.subscribing ??= this.#openSubscriber()
    const subscriber = await this.subscribing
    const channel = busChannel(shard)
    let handlers = this.handlers.get(channel)
    if (handlers === undefined) {
      this.handlers.set(channel, (handlers = new Set()))
      await (subscriber instanceof Cluster ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel))
    }
    handlers.add(onMessage)
    return async () => {
      handlers.delete(onMessage)
      if (handlers.size === 0 && this.handlers.get(channel) === handlers) {
        this.handlers.delete(channel)
        // A subscriber that is reconnecting refuses commands: its handlers are gone, so what it still receives is dropped.
        const subscriber = this.subscriber
        await (subscriber instanceof Cluster ? subscriber.sunsubscribe(channel) : subscriber?.unsubscribe(channel))?.catch(() => {})
      }
    }
  }

  /**
   * What receives the bus: on one Redis, a second connection in subscriber
   * mode; on a Cluster, the cluster client itself, whose sharded subscribers
   * (a connection per master, kept in step with the slots by ioredis) deliver `smessage`.
   * @returns {Promise<Redis | Cluster>}
   */
  async #openSubscriber () {
    const deliver = (/** @type {string} */ channel, /** @type {string} */ text) => {
      const handlers = this.handlers.get(channel)
      if (handlers === undefined) return
      let message
      try { message = JSON.parse(text) } catch { return }
      for (const handler of handlers) handler(message)
    }
    if (this.redis instanceof Cluster) {
      this.redis.on('smessage', deliver)
      return (this.subscriber = this.redis)
    }
    const subscriber = this.subscriber = this.redis.duplicate()
    quietErrors(subscriber)
    subscriber.on('message', deliver)
    await subscriber.connect()
    return subscriber
  }

  /** @type {Store['close']} */
  async close () {
    this.handlers.clear()
    await Promise.all([...new Set([this.subscriber, this.redis])].map((r) => r?.quit().catch(() => r.disconnect())))
  }

  /**
   * Send a batch of commands together; auto-pipelining puts them in one write
   * per node. The first failed command rejects, after all have settled.
   * @param {Command[]} commands
   * @returns {Promise<any[]>} each command's result
   */
  async #exec (commands) {
    const settled = await this.#settle(commands)
    for (const r of settled) if (r.status === 'rejected') throw r.reason
    return settled.map((r) => /** @type {PromiseFulfilledResult<any>} */ (r).value)
  }

  /**
   * Send a batch of commands together, as #exec does, and report how each one settled.
   * @param {Command[]} commands
   * @param {boolean} [inParts] each command fails half the store's timeout after being sent, whatever
   *   the others do: a master that is down may not fail its commands at once (ioredis keeps them while
   *   it reconnects), and what the rest answered is still read
   * @returns {Promise<PromiseSettledResult<any>[]>}
   */
  async #settle (commands, inParts = false) {
    this.roundTrips++
    // commands by name (`redis[name]`): ioredis types each command apart, and these come as data
    const redis = /** @type {any} */ (this.redis)
    return Promise.allSettled(commands.map(([name, ...args]) => inParts ? this.parts.bound(redis[name](...args), this.partLate) : redis[name](...args)))
  }
}

/**
 * ioredis emits `error` for every failed reconnect, and Node prints "Unhandled
 * error event" for an emitter without a listener. The coordinator hears of a
 * store going down and back from its beats (presence.js), once per change, and
 * each failed command rejects to its caller.
 * @param {Redis | Cluster} redis
 */
function quietErrors (redis) {
  redis.on('error', () => {})
}
