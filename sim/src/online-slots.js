/**
 * The state the coordinator keeps of each online peer, for online clients
 * only, packed densely by *slot*: a client takes a free slot when its session
 * starts and gives it back when the session ends. A lookup reads this state
 * for every sampled holder, stale ones included, so it is laid out for that:
 * a few thousand clients are online at a time, so the whole table stays in
 * the processor's fastest caches, where an array indexed by client id (a
 * million clients, one cache line each) would miss on nearly every holder.
 *
 * Every session has a *tag*, unique across the run. Index records name a
 * holder as (slot, tag): the record is live while that slot's tag is still
 * the record's, so one comparison against this table tells a live holder from
 * a client that has gone (or whose slot a later session now uses).
 */
import { growTo } from './batch.js'

/** fields of a slot, int32 each: the session's tag (0 while the slot is free) */
export const TAG = 0
/** the number of the last lookup whose asker has a live channel to this session */
export const MARK = 1
/** the client in this session */
export const CLIENT = 2
/**
 * int32 fields per slot: the three above and one unused, so that a slot is
 * addressed as `slot << 2` and never straddles a cache line. (When a holder
 * was last chosen is its index entry's, per asset: holder-index.js.)
 */
export const SLOT_STRIDE = 4

/** Slots of the online clients. */
export class OnlineSlots {
  constructor () {
    /** per slot, [s*SLOT_STRIDE + TAG | MARK | CLIENT | (unused)] */
    this.state = new Int32Array(0)
    /** per slot, the time its client is online until (∞ while its session goes on) */
    this.until = new Float64Array(0)
    /** per slot, bytes the session has served so far (the engine adds them to its client's total when it ends) */
    this.uploaded = new Float64Array(0)
    /** slots made so far */
    this.capacity = 0
    /** free slots, the most recently freed on top (its memory is the warmest) */
    this.free = new Int32Array(0)
    this.freeCount = 0
    /** the last tag handed out */
    this.lastTag = 0
    /** the largest tag an int32 holds; a test may lower it */
    this.tagLimit = 0x7fffffff
    this.grow(256)
  }

  /** @param {number} capacity */
  grow (capacity) {
    const old = this.capacity
    this.state = growTo(this.state, capacity * SLOT_STRIDE)
    this.until = growTo(this.until, capacity)
    this.uploaded = growTo(this.uploaded, capacity)
    this.free = growTo(this.free, capacity)
    this.capacity = this.state.length / SLOT_STRIDE
    // hand out low slots first, so the table stays as small as the online crowd
    for (let s = this.capacity - 1; s >= old; s--) this.free[this.freeCount++] = s
  }

  /**
   * Starts a session of `client` in a free slot, with no marks.
   * The caller renumbers tags first when `tagsExhausted()`.
   * @param {number} client
   * @returns {number} the slot
   */
  open (client) {
    if (this.freeCount === 0) this.grow(this.capacity * 2)
    const s = this.free[--this.freeCount]
    const at = s * SLOT_STRIDE
    const state = this.state
    state[at + TAG] = ++this.lastTag
    state[at + MARK] = 0
    state[at + CLIENT] = client
    this.uploaded[s] = 0
    return s
  }

  /**
   * Ends the session in slot `s`: its records go stale.
   * @param {number} s
   */
  close (s) {
    this.state[s * SLOT_STRIDE + TAG] = 0
    this.free[this.freeCount++] = s
  }

  /** @returns {boolean} whether the next `open` would overflow the tags */
  tagsExhausted () {
    return this.lastTag >= this.tagLimit
  }

  /**
   * Gives every open session a new tag, `slot + 1`, after dropping every stale
   * record from `lists` (SlabLists of [slot, tag, …] records) and rewriting the
   * live ones. Afterwards no record carries an old tag, so tags count on from
   * `capacity` without ever meeting one again. O(records), once in 2^31 sessions.
   * @param {import('./slab-lists.js').SlabLists[]} lists
   */
  renumber (lists) {
    const state = this.state
    for (const l of lists) {
      for (let owner = 0; owner < l.ownerCap; owner++) {
        for (let pos = l.length(owner) - 1; pos >= 0; pos--) {
          const data = l.data(owner)
          const at = l.base(owner) + pos * l.stride
          const s = data[at]
          if (s < this.capacity && state[s * SLOT_STRIDE + TAG] === data[at + 1]) data[at + 1] = s + 1
          else l.removeAt(owner, pos)
        }
      }
    }
    for (let s = 0; s < this.capacity; s++) {
      if (state[s * SLOT_STRIDE + TAG] !== 0) state[s * SLOT_STRIDE + TAG] = s + 1
    }
    this.lastTag = this.capacity
  }
}
