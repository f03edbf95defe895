/**
 * The shard registry on Redis (redis-store.js keeps the rest): which shards
 * are live, what each said of itself, and which dead shard a beat hands to
 * its caller to reap; the sentinels that tell a master that lost its data.
 *
 * Keys (a hash tag keeps each copy in one slot):
 *   mgh:{r}:shards    ZSET  live shard → when its entry expires (Redis's clock, ms)
 *   mgh:{r}:info      HASH  shard → its ShardInfo, JSON
 *   mgh:{r}:reaping   ZSET  dead shard → when its reaper's lease runs out
 *                     (on a Cluster two more copies, under {r1188} and {r407}: see REGISTRIES)
 *   mgh:e:{<tag>}     STRING  a sentinel on each master: gone means that master lost its data
 *
 * A beat is one Lua script on each copy (one copy on one Redis, three on a
 * Cluster), run on Redis's clock so that shards on different hosts agree on
 * expiry, plus one `SET NX` per master for the sentinels; all sent together.
 * Between beats the registry is read from memory (`isLive`, `liveShards`):
 * nothing is read per holder a lookup finds.
 */
import { Cluster } from 'ioredis'
import calculateSlot from 'cluster-key-slot'
import { isLiveIn, liveIn } from './store.js'

/** @typedef {import('./store.js').Store} Store */
/** @typedef {import('./store.js').ShardInfo} ShardInfo */
/** @typedef {import('./store.js').ShardTable} ShardTable */
/** @typedef {[string, ...(string | number)[]]} Command */
/** @typedef {(commands: Command[], inParts?: boolean) => Promise<PromiseSettledResult<any>[]>} Settle
 *   sends commands together and says how each settled (RedisStore's; `inParts`: each bounded on its own) */

/** what every key of the Redis store begins with */
export const PREFIX = 'mgh:'

/**
 * The shard registry's copies, each in one slot. On one Redis, one copy. On a
 * Cluster, liveness must not hinge on one master: three copies whose hash tags'
 * slots (7893, 2730, 13657) lie in different thirds of the slot space, so that
 * on three or more masters with the slots split evenly (as `redis-cli --cluster
 * create` splits them) each copy is on a master of its own. A shard beats every
 * copy; a beat succeeds when any copy answers; a shard is live when any copy
 * says so, and dead only when no copy that answered says it is live.
 * The first copy is the one earlier versions used alone: they and this one agree during a rolling upgrade.
 */
const REGISTRIES = ['r', 'r1188', 'r407'].map((tag) => ({
  shards: `${PREFIX}{${tag}}:shards`,
  info: `${PREFIX}{${tag}}:info`,
  reaping: `${PREFIX}{${tag}}:reaping`
}))
const sentinelKey = (/** @type {string} */ tag) => `${PREFIX}e:{${tag}}`

/** the least time between two registry reads prompted by a shard this store has not heard of */
const REFRESH_MS = 100

/** how long a reaper may take before another shard takes the dead shard over */
const REAP_LEASE_MS = 60_000

/**
 * The beat (KEYS: registry, info, reaping; ARGV: shard, ttlMs, info JSON, reap lease ms):
 * renews this shard's entry; moves expired shards to `reaping` with a lease and
 * returns them (with any whose reaper's lease ran out) to this caller alone; and
 * returns the live shards with their time left and info. A shard that beats
 * again after being declared dead leaves `reaping`, which stops its reaper.
 * Returns { had entry 0|1, [shard, msLeft, info JSON]…, [dead shard]… }.
 */
const LIVE_LUA = `
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = tostring(tonumber(live[i + 1]) - now)
  out[#out + 1] = redis.call('HGET', KEYS[2], live[i]) or ''
end`
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`
const BEAT_LUA = `${NOW_LUA}
local shard = ARGV[1]
local lease = tonumber(ARGV[4])
local had = redis.call('ZSCORE', KEYS[1], shard)
redis.call('ZREM', KEYS[3], shard)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), shard)
redis.call('HSET', KEYS[2], shard, ARGV[3])
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, s in ipairs(dead) do
  redis.call('ZREM', KEYS[1], s)
  redis.call('HDEL', KEYS[2], s)
  redis.call('ZADD', KEYS[3], now + lease, s)
end
for _, s in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('ZADD', KEYS[3], now + lease, s)
  dead[#dead + 1] = s
end
${LIVE_LUA}
return { had and 1 or 0, out, dead }`

/** Reads the live shards without beating (KEYS: registry, info); returns [shard, msLeft, info JSON]…. */
const READ_LUA = `${NOW_LUA}
${LIVE_LUA}
return out`

/** The registry's side of a RedisStore: its beats, reads and what it knows between them. */
export class RedisRegistry {
  /**
   * @param {import('ioredis').Redis | Cluster} redis
   * @param {Settle} settle
   */
  constructor (redis, settle) {
    this.redis = redis
    this.settle = settle
    redis.defineCommand('mghBeat', { numberOfKeys: 3, lua: BEAT_LUA })
    redis.defineCommand('mghLive', { numberOfKeys: 2, lua: READ_LUA })
    /** the copies this store beats (REGISTRIES) */
    this.copies = redis instanceof Cluster ? REGISTRIES : REGISTRIES.slice(0, 1)
    /** @type {ShardTable} the registry as of the last beat, expiry on this host's clock */
    this.shards = new Map()
    /** @type {Map<string, number>} dead shard → the copy that handed it to this store to reap */
    this.reapingIn = new Map()
    /** @type {Promise<void> | null} a registry read in flight */
    this.refreshing = null
    this.refreshedAt = 0
    /** @type {Set<string>} sentinel keys seen in place: one that goes missing means its master lost its data */
    this.sentinels = new Set()
    /** @type {Set<string>} shards that have beaten through this store (before its first beat, a shard has no entry) */
    this.beaten = new Set()
  }

  /** @type {Store['beat']} */
  async beat (shard, info, ttlMs) {
    const sentinels = this.#sentinelKeys()
    const text = JSON.stringify(info)
    // Sent together; a master that is down costs only its part (#settle's partMs).
    const settled = await this.settle([
      ...this.copies.map((r) => /** @type {Command} */ (['mghBeat', r.shards, r.info, r.reaping, shard, ttlMs, text, REAP_LEASE_MS])),
      ...sentinels.map((key) => /** @type {Command} */ (['set', key, '1', 'NX']))
    ], true)
    const copies = settled.slice(0, this.copies.length)
    const placed = settled.slice(this.copies.length)
    /** @type {{ copy: number, had: number, live: string[], dead: string[] }[]} */
    const answered = []
    copies.forEach((r, copy) => { if (r.status === 'fulfilled') answered.push({ copy, had: r.value[0], live: r.value[1], dead: r.value[2] }) })
    if (answered.length === 0) throw /** @type {PromiseRejectedResult} */ (copies[0]).reason
    // No entry in any copy where this shard had one: the registry's data went, or the shard was reaped while cut off.
    let lost = answered.every((a) => a.had === 0) && this.beaten.has(shard)
    this.beaten.add(shard)
    placed.forEach((r, i) => {
      if (r.status !== 'fulfilled') return
      // OK: the key was missing and is set now; after it was seen in place, its master lost its data.
      if (r.value === 'OK' && this.sentinels.has(sentinels[i])) lost = true
      this.sentinels.add(sentinels[i])
    })
    this.#learn(answered.map((a) => a.live))
    // Dead in one copy is not dead: a copy whose master just failed over has every entry expired.
    /** @type {Set<string>} */
    const dead = new Set()
    for (const a of answered) {
      for (const s of a.dead) {
        if (this.isLive(s) || dead.has(s)) continue
        dead.add(s)
        this.reapingIn.set(s, a.copy)
      }
    }
    return { live: this.liveShards(), dead: [...dead], lost }
  }

  /** @type {Store['refresh']} */
  refresh () {
    // One read at a time, and at most one per REFRESH_MS: a stream of lookups or
    // connects naming shards this store has not heard of costs Redis almost nothing.
    if (this.refreshing === null && Date.now() - this.refreshedAt >= REFRESH_MS) {
      this.refreshedAt = Date.now()
      this.refreshing = this.settle(this.copies.map((r) => /** @type {Command} */ (['mghLive', r.shards, r.info])), true)
        .then((copies) => {
          const read = /** @type {string[][]} */ (copies.flatMap((r) => r.status === 'fulfilled' ? [r.value] : []))
          // None answered: the next beat reports a store that is down.
          if (read.length > 0) this.#learn(read)
        })
        .finally(() => { this.refreshing = null })
    }
    return this.refreshing ?? Promise.resolve()
  }

  /**
   * Take in the registry's copies as a beat or a refresh read them: a shard is
   * live until the latest expiry any copy gives it.
   * @param {string[][]} copies each [shard, ms left, info JSON]…
   */
  #learn (copies) {
    const now = Date.now()
    this.shards.clear()
    for (const live of copies) {
      for (let i = 0; i < live.length; i += 3) {
        const expiresAt = now + Number(live[i + 1])
        if ((this.shards.get(live[i])?.expiresAt ?? -Infinity) < expiresAt) this.shards.set(live[i], { info: parseInfo(live[i + 2]), expiresAt })
      }
    }
  }

  /** @type {Store['isLive']} */
  isLive (shard) {
    return isLiveIn(this.shards, shard, Date.now())
  }

  /** @type {Store['liveShards']} */
  liveShards () {
    return liveIn(this.shards, Date.now())
  }

  /**
   * @param {string} shard
   * @returns {Command[]} what takes `shard` out of every copy
   */
  leaving (shard) {
    this.shards.delete(shard)
    return this.copies.flatMap((r) => /** @type {Command[]} */ ([['zrem', r.shards, shard], ['hdel', r.info, shard]]))
  }

  /**
   * The `reaping` key a reaper of `shard` works under: the copy's that handed it out as dead.
   * @param {string} shard
   * @returns {string}
   */
  reapingKey (shard) {
    const copy = this.copies[this.reapingIn.get(shard) ?? 0]
    this.reapingIn.delete(shard)
    return copy.reaping
  }

  /**
   * @param {string} shard
   * @returns {Command[]} what takes a reaped shard out of every copy's `reaping`
   */
  reaped (shard) {
    return this.copies.map((r) => /** @type {Command} */ (['zrem', r.reaping, shard]))
  }

  /**
   * The sentinel keys: one on a single Redis; on a Cluster, one in a slot of
   * each master, so that any master coming back empty is noticed.
   * @returns {string[]}
   */
  #sentinelKeys () {
    if (!(this.redis instanceof Cluster)) return [sentinelKey('0')]
    const slots = this.redis.slots
    /** @type {Map<string, string>} master → a key in one of its slots */
    const keys = new Map()
    for (let i = 0; keys.size < new Set(slots.map((s) => s?.[0])).size && i < 100_000; i++) {
      const master = slots[calculateSlot(String(i))]?.[0]
      if (master !== undefined && !keys.has(master)) keys.set(master, sentinelKey(String(i)))
    }
    return [...keys.values()]
  }
}

/**
 * @param {string} text a ShardInfo as JSON ('' when missing)
 * @returns {ShardInfo}
 */
function parseInfo (text) {
  try {
    const { url = '', peers = 0, holdings = 0, draining = false } = JSON.parse(text)
    return { url: String(url), peers: Number(peers) || 0, holdings: Number(holdings) || 0, draining: draining === true }
  } catch {
    return { url: '', peers: 0, holdings: 0, draining: false }
  }
}
