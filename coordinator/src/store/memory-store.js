/**
 * In-process store: the embedded default. Everything lives in Maps; the bus is
 * an EventEmitter, so coordinators sharing one instance in one process relay to
 * each other exactly as Redis-backed shards do, and the shard registry expires
 * entries by the store's clock exactly as Redis's does.
 */
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { sampleNext, sampleStart } from '../../../policy/peer-selection.js'
import { shardOfPeer } from '../../../protocol/index.js'

import { SALT_MS, USAGE_ASSETS_KEPT, USAGE_MINUTE_MS, isLiveIn, liveIn, minuteOf, noUsage } from './store.js'
import { USAGE_SOURCES } from '../../../protocol/index.js'

/** @typedef {import('./store.js').Store} Store */
/** @typedef {import('./store.js').ShardInfo} ShardInfo */
/** @typedef {import('./store.js').ShardTable} ShardTable */

/** `~`, which ends a peer id's shard (protocol/messages.js shardOfPeer) */
const TILDE = 0x7e

/**
 * Holders of one asset: an array for O(1) random sampling, the time each entry
 * was last chosen beside it, and an index for O(1) removal (swap with the last
 * element).
 */
class HolderSet {
  constructor () {
    /** @type {string[]} */
    this.ids = []
    /** @type {number[]} lastChosen of the entry at the same position */
    this.chosen = []
    /** @type {Map<string, number>} */
    this.index = new Map()
  }

  /** @param {string} id */
  add (id) {
    if (this.index.has(id)) return
    this.index.set(id, this.ids.length)
    this.ids.push(id)
    this.chosen.push(0)
  }

  /** @param {string} id */
  delete (id) {
    const at = this.index.get(id)
    if (at === undefined) return
    const last = /** @type {string} */ (this.ids.pop())
    const lastChosen = /** @type {number} */ (this.chosen.pop())
    this.index.delete(id)
    if (at < this.ids.length) {
      this.ids[at] = last
      this.chosen[at] = lastChosen
      this.index.set(last, at)
    }
  }
}

/** @implements {Store} */
export class MemoryStore {
  /**
   * @param {{ random?: import('../../../policy/peer-selection.js').RandomSource, now?: () => number }} [options]
   *   random: where `sampleHolders` draws its random start (a test passes a seeded source);
   *   now: ms, the clock shard entries expire by (default Date.now)
   */
  constructor ({ random = Math, now = Date.now } = {}) {
    this.random = random
    this.now = now
    /** one process: it answers or it does not */
    this.failsInParts = false
    /** @type {Map<string, Set<string>>} what each peer holds */
    this.peers = new Map()
    /** @type {Map<string, HolderSet>} */
    this.holders = new Map()
    /** @type {ShardTable} the shard registry */
    this.shards = new Map()
    this.bus = new EventEmitter()
    this.bus.setMaxListeners(0)
    /** @type {Map<string, Map<string, number>>} subject → reporter → when it last reported */
    this.reports = new Map()
    /** @type {Map<string, number>} subject → when its quarantine ends */
    this.quarantined = new Map()
    /** @type {Map<string, number>} `<site> <id>` of a usage report → until when it is kept, oldest first */
    this.usageIds = new Map()
    /** @type {{ value: string, until: number } | undefined} */
    this.salt = undefined
    /**
     * site → its usage: totals, minute start → counts (with when each expires), path → peer bytes
     * @type {Map<string, { total: import('./store.js').UsageCounts, minutes: Map<number, { counts: import('./store.js').UsageCounts, until: number }>, assets: Map<string, number> }>}
     */
    this.usage = new Map()
  }

  /** @type {Store['beat']} */
  async beat (shard, info, ttlMs) {
    const now = this.now()
    this.shards.set(shard, { info: { ...info }, expiresAt: now + ttlMs })
    const dead = []
    for (const [id, entry] of this.shards) {
      if (entry.expiresAt <= now) {
        this.shards.delete(id)
        dead.push(id)
      }
    }
    // Nothing here outlives the process, so nothing is ever lost while a shard runs.
    return { live: this.liveShards(), dead, lost: false }
  }

  /** @type {Store['leave']} */
  async leave (shard) {
    this.shards.delete(shard)
  }

  /** @type {Store['reapShard']} */
  async reapShard (shard) {
    for (const [id, assets] of this.peers) {
      if (shardOfPeer(id) === shard) await this.removePeer(id, [...assets])
    }
  }

  /** @type {Store['isLive']} */
  isLive (shard) {
    return isLiveIn(this.shards, shard, this.now())
  }

  /** @type {Store['refresh']} */
  async refresh () {
    // The registry is this object: always current.
  }

  /** @type {Store['liveShards']} */
  liveShards () {
    return liveIn(this.shards, this.now())
  }

  /** @type {Store['onLate']} */
  onLate () {
    // In process: a call is answered at once or not at all.
    return () => {}
  }

  /** @type {Store['addPeer']} */
  async addPeer (id, assets) {
    if (!this.peers.has(id)) this.peers.set(id, new Set())
    this.#add(id, assets)
  }

  /** @type {Store['updatePeer']} answered at once */
  updatePeer (id, added, removed) {
    if (!this.peers.has(id)) return
    this.#remove(id, removed)
    this.#add(id, added)
  }

  /** @type {Store['removePeer']} */
  async removePeer (id) {
    const held = this.peers.get(id)
    if (held === undefined) return
    this.#remove(id, [...held])
    this.peers.delete(id)
  }

  /** @type {Store['sampleHolders']} answered at once */
  sampleHolders (hashes, limit) {
    return hashes.map((hash) => this.#sample(hash, limit))
  }

  /**
   * @param {string} hash
   * @param {number} limit
   * @returns {import('./store.js').Holder[]}
   */
  #sample (hash, limit) {
    const set = this.holders.get(hash)
    if (set === undefined) return []
    // The shared rule's sample (policy/peer-selection.js): a run from a random
    // start, wrapping, counting only holders on live shards.
    const sample = []
    const n = set.ids.length
    const now = this.now()
    let read = 0
    // Holders on one shard share its prefix: a run of them reads its liveness once.
    let shard = ''
    let live = false
    for (let pos = sampleStart(n, limit, this.random); pos !== -1; pos = sampleNext(pos, ++read, sample.length, n, limit)) {
      const id = set.ids[pos]
      if (shard === '' || id.charCodeAt(shard.length) !== TILDE || !id.startsWith(shard)) {
        shard = shardOfPeer(id)
        live = isLiveIn(this.shards, shard, now)
      }
      if (live) sample.push({ id, lastChosen: set.chosen[pos] })
    }
    return sample
  }

  /** @type {Store['markChosen']} answered at once */
  markChosen (choices, at) {
    for (const [hash, id] of choices) {
      const set = this.holders.get(hash)
      const pos = set?.index.get(id)
      if (set !== undefined && pos !== undefined) set.chosen[pos] = at
    }
  }

  /** @type {Store['hasPeer']} */
  async hasPeer (id) {
    return this.peers.has(id)
  }

  /** @type {Store['getPeer']} */
  async getPeer (id) {
    const held = this.peers.get(id)
    if (held === undefined) return null
    return { id, shard: shardOfPeer(id), assets: [...held] }
  }

  /** @type {Store['publish']} */
  async publish (shard, message) {
    // Deliver asynchronously, as a real bus would, and as a copy.
    const copy = structuredClone(message)
    queueMicrotask(() => this.bus.emit(shard, copy))
    return this.bus.listenerCount(shard)
  }

  /** @type {Store['subscribe']} */
  async subscribe (shard, onMessage) {
    this.bus.on(shard, onMessage)
    return async () => { this.bus.off(shard, onMessage) }
  }

  /** @type {Store['report']} */
  async report (subject, reporter, at, windowMs) {
    let reporters = this.reports.get(subject)
    if (reporters === undefined) this.reports.set(subject, (reporters = new Map()))
    reporters.set(reporter, at)
    for (const [who, when] of reporters) if (when <= at - windowMs) reporters.delete(who)
    return reporters.size
  }

  /** @type {Store['quarantine']} */
  async quarantine (subject, ms) {
    this.quarantined.set(subject, this.now() + ms)
    this.reports.delete(subject)
  }

  /** @type {Store['isQuarantined']} */
  async isQuarantined (subject) {
    const until = this.quarantined.get(subject)
    if (until !== undefined && until <= this.now()) this.quarantined.delete(subject)
    return until !== undefined && until > this.now()
  }

  /** @type {Store['networkSalt']} */
  async networkSalt () {
    if (this.salt === undefined || this.salt.until <= this.now()) this.salt = { value: randomBytes(16).toString('base64url'), until: this.now() + SALT_MS }
    return this.salt.value
  }

  /** @type {Store['addUsage']} */
  async addUsage (site, at, counts, assets, { historyMs, maxSites }) {
    let u = this.usage.get(site)
    if (!u) {
      if (this.usage.size >= maxSites) return false
      this.usage.set(site, (u = { total: noUsage(), minutes: new Map(), assets: new Map() }))
    }
    const now = this.now()
    for (const [m, entry] of u.minutes) if (entry.until <= now) u.minutes.delete(m)
    const minute = minuteOf(at)
    const entry = u.minutes.get(minute) ?? { counts: noUsage(), until: 0 }
    u.minutes.set(minute, entry)
    entry.until = now + historyMs
    for (const source of USAGE_SOURCES) {
      u.total[source] += counts[source]
      entry.counts[source] += counts[source]
    }
    for (const [path, bytes] of assets) u.assets.set(path, (u.assets.get(path) ?? 0) + bytes)
    if (u.assets.size > USAGE_ASSETS_KEPT) u.assets = new Map([...u.assets].sort((a, b) => b[1] - a[1]).slice(0, USAGE_ASSETS_KEPT))
    return true
  }

  /** @type {Store['siteUsage']} */
  async siteUsage (site, since, top) {
    const u = this.usage.get(site)
    if (!u) return { total: noUsage(), minutes: [], assets: [] }
    const now = this.now()
    const minutes = [...u.minutes].filter(([m, e]) => m + USAGE_MINUTE_MS > since && e.until > now).sort((a, b) => a[0] - b[0])
    return {
      total: { ...u.total },
      minutes: minutes.map(([at, e]) => ({ at, counts: { ...e.counts } })),
      assets: [...u.assets].sort((a, b) => b[1] - a[1]).slice(0, top)
    }
  }

  /** @type {Store['usageSites']} */
  async usageSites () {
    return [...this.usage.keys()]
  }

  /** @type {Store['claimUsage']} */
  async claimUsage (site, id, ms) {
    const now = this.now()
    // Oldest first (callers keep ids equally long): what has expired leaves from the front.
    for (const [key, until] of this.usageIds) {
      if (until > now) break
      this.usageIds.delete(key)
    }
    const key = `${site} ${id}`
    if (this.usageIds.has(key)) return false
    this.usageIds.set(key, now + ms)
    return true
  }

  /** @type {Store['close']} */
  async close () {
    this.bus.removeAllListeners()
  }

  /**
   * @param {string} id a listed peer
   * @param {readonly string[]} hashes
   */
  #add (id, hashes) {
    const assets = /** @type {Set<string>} */ (this.peers.get(id))
    for (const hash of hashes) {
      if (assets.has(hash)) continue
      assets.add(hash)
      let set = this.holders.get(hash)
      if (set === undefined) this.holders.set(hash, (set = new HolderSet()))
      set.add(id)
    }
  }

  /**
   * @param {string} id a listed peer
   * @param {readonly string[]} hashes
   */
  #remove (id, hashes) {
    const assets = /** @type {Set<string>} */ (this.peers.get(id))
    for (const hash of hashes) {
      if (!assets.delete(hash)) continue
      const set = this.holders.get(hash)
      if (set === undefined) continue
      set.delete(id)
      if (set.ids.length === 0) this.holders.delete(hash)
    }
  }
}
