/**
 * In-process store: the embedded default. Everything lives in Maps; the bus is
 * an EventEmitter, so coordinators sharing one instance in one process relay to
 * each other exactly as Redis-backed shards do.
 */
import { EventEmitter } from 'node:events'
import { sampleNext, sampleStart } from '../policy/peer-selection.js'

/** @typedef {import('./store.js').Store} Store */
/** @typedef {import('./store.js').PeerRecord} PeerRecord */

/**
 * Holders of one asset: an array for O(1) random sampling plus an index for
 * O(1) removal (swap with the last element).
 */
class HolderSet {
  constructor () {
    /** @type {string[]} */
    this.ids = []
    /** @type {Map<string, number>} */
    this.index = new Map()
  }

  /** @param {string} id */
  add (id) {
    if (this.index.has(id)) return
    this.index.set(id, this.ids.length)
    this.ids.push(id)
  }

  /** @param {string} id */
  delete (id) {
    const at = this.index.get(id)
    if (at === undefined) return
    const last = /** @type {string} */ (this.ids.pop())
    this.index.delete(id)
    if (at < this.ids.length) {
      this.ids[at] = last
      this.index.set(last, at)
    }
  }
}

/** @implements {Store} */
export class MemoryStore {
  /**
   * @param {{ random?: import('../policy/peer-selection.js').RandomSource }} [options]
   *   random: where `sampleHolders` draws its random start (a test passes a seeded source)
   */
  constructor ({ random = Math } = {}) {
    this.random = random
    /** @type {Map<string, {shard: string, joinedAt: number, lastChosen: number, assets: Set<string>}>} */
    this.peers = new Map()
    /** @type {Map<string, HolderSet>} */
    this.holders = new Map()
    this.holdings = 0
    this.bus = new EventEmitter()
    this.bus.setMaxListeners(0)
  }

  /** @type {Store['addPeer']} */
  async addPeer (id, { shard, joinedAt }, assets) {
    if (this.peers.has(id)) await this.removePeer(id)
    this.peers.set(id, { shard, joinedAt, lastChosen: 0, assets: new Set() })
    this.#add(id, assets)
  }

  /** @type {Store['updatePeer']} */
  async updatePeer (id, added, removed) {
    if (!this.peers.has(id)) return
    this.#remove(id, removed)
    this.#add(id, added)
  }

  /** @type {Store['removePeer']} */
  async removePeer (id) {
    const peer = this.peers.get(id)
    if (peer === undefined) return
    this.#remove(id, [...peer.assets])
    this.peers.delete(id)
  }

  /** @type {Store['touchPeers']} */
  async touchPeers () {
    // Records live exactly as long as their sessions; nothing expires.
  }

  /** @type {Store['sampleHolders']} */
  async sampleHolders (hash, limit) {
    const set = this.holders.get(hash)
    if (set === undefined) return []
    // The shared rule's sample (policy/peer-selection.js): a run from a random
    // start, wrapping; every holder listed here is live.
    const sample = []
    const n = set.ids.length
    for (let pos = sampleStart(n, limit, this.random); pos !== -1; pos = sampleNext(pos, sample.length, sample.length, n, limit)) {
      const id = set.ids[pos]
      sample.push({ id, lastChosen: this.#peer(id).lastChosen })
    }
    return sample
  }

  /** @type {Store['markChosen']} */
  async markChosen (ids, at) {
    for (const id of ids) {
      const peer = this.peers.get(id)
      if (peer !== undefined) peer.lastChosen = at
    }
  }

  /** @type {Store['getPeer']} */
  async getPeer (id) {
    const peer = this.peers.get(id)
    if (peer === undefined) return null
    return { id, shard: peer.shard, joinedAt: peer.joinedAt, lastChosen: peer.lastChosen, assets: [...peer.assets] }
  }

  /** @type {Store['shardOf']} */
  async shardOf (id) {
    return this.peers.get(id)?.shard ?? null
  }

  /** @type {Store['publish']} */
  async publish (shard, message) {
    // Deliver asynchronously, as a real bus would, and as a copy.
    const copy = structuredClone(message)
    queueMicrotask(() => this.bus.emit(shard, copy))
  }

  /** @type {Store['subscribe']} */
  async subscribe (shard, onMessage) {
    this.bus.on(shard, onMessage)
    return async () => { this.bus.off(shard, onMessage) }
  }

  /** @type {Store['stats']} */
  async stats () {
    return { peers: this.peers.size, holdings: this.holdings }
  }

  /** @type {Store['close']} */
  async close () {
    this.bus.removeAllListeners()
  }

  /**
   * The record of a peer the caller knows is online (a holder listed in the
   * index, or the peer an update or removal is about).
   * @param {string} id
   */
  #peer (id) {
    const peer = this.peers.get(id)
    if (peer === undefined) throw new Error(`memory store: no record for online peer ${id}`)
    return peer
  }

  /**
   * @param {string} id
   * @param {string[]} hashes
   */
  #add (id, hashes) {
    const assets = this.#peer(id).assets
    for (const hash of hashes) {
      if (assets.has(hash)) continue
      assets.add(hash)
      this.holdings++
      let set = this.holders.get(hash)
      if (set === undefined) this.holders.set(hash, (set = new HolderSet()))
      set.add(id)
    }
  }

  /**
   * @param {string} id
   * @param {string[]} hashes
   */
  #remove (id, hashes) {
    const assets = this.#peer(id).assets
    for (const hash of hashes) {
      if (!assets.delete(hash)) continue
      this.holdings--
      const set = this.holders.get(hash)
      if (set === undefined) continue
      set.delete(id)
      if (set.ids.length === 0) this.holders.delete(hash)
    }
  }
}
