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
 * a client that has gone (or whose slot a later session now uses). A client
 * that stops serving mid-session (its upload budget spent, quarantined) takes
 * a new tag, so its records go stale at once, as the coordinator unlists it.
 *
 * Every peer record has a *page* id, from the same counter: with page-lifetime
 * channels (`--channels page`) each page view is a new peer record, so the
 * channels other clients opened to the previous one are dead. Channel records
 * name a peer as (slot, page).
 */
import { growTo } from '../batch.js'

/** fields of a slot, int32 each: the session's tag (0 while the slot is free) */
export const TAG = 0
/** the number of the last lookup whose asker has a live channel to this session */
export const MARK = 1
/** the client in this session */
export const CLIENT = 2
/** the id of the current peer record (a page view's, or the session's): channels reach one */
export const PAGE = 3
/**
 * the coordinator's clock when the current peer record joined: its index entries
 * marked at or before it read as never chosen, as a new peer id's entries are
 */
export const SINCE = 4
/** 1 while the session lists its holdings and serves; 0 when it does not (receive-only, budget spent, quarantined) */
export const LISTED = 5
/** lookups the current page has made: where in its holder list the next one starts (peer-fetch.js `turn`) */
export const TURN = 6
/** asset requests its current page view has made (its first few are in the viewport: the hedge rule) */
export const ASSETS = 7
/**
 * int32 fields per slot: the eight above, so that a slot is
 * addressed as `slot << 3` and never straddles a cache line. (When a holder
 * was last chosen is its index entry's, per asset: holder-index.js.)
 */
export const SLOT_STRIDE = 8

/** Slots of the online clients. */
export class OnlineSlots {
  constructor () {
    /** per slot, [s*SLOT_STRIDE + TAG | MARK | CLIENT | PAGE | SINCE | LISTED | TURN | ASSETS] */
    this.state = new Int32Array(0)
    /** per slot, the time its client is online until (∞ while its session goes on) */
    this.until = new Float64Array(0)
    /** per slot, bytes the session has served so far (the engine adds them to its client's total when it ends) */
    this.uploaded = new Float64Array(0)
    /** per slot, the time of the session's latest request (−∞ before its first): where page views begin */
    this.lastAt = new Float64Array(0)
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
    this.lastAt = growTo(this.lastAt, capacity)
    this.free = growTo(this.free, capacity)
    this.capacity = this.state.length / SLOT_STRIDE
    // hand out low slots first, so the table stays as small as the online crowd
    for (let s = this.capacity - 1; s >= old; s--) this.free[this.freeCount++] = s
  }

  /**
   * Starts a session of `client` in a free slot, with no marks, listed, its
   * peer record joined at coordinator clock `clock`. The caller renumbers tags
   * first when `tagsExhausted()`.
   * @param {number} client
   * @param {number} clock
   * @returns {number} the slot
   */
  open (client, clock) {
    if (this.freeCount === 0) this.grow(this.capacity * 2)
    const s = this.free[--this.freeCount]
    const at = s * SLOT_STRIDE
    const state = this.state
    state[at + TAG] = ++this.lastTag
    state[at + MARK] = 0
    state[at + CLIENT] = client
    state[at + PAGE] = ++this.lastTag
    state[at + SINCE] = clock
    state[at + LISTED] = 1
    state[at + TURN] = 0
    state[at + ASSETS] = 0
    this.uploaded[s] = 0
    this.lastAt[s] = -Infinity
    return s
  }

  /**
   * A new peer record for the session in slot `s` (a new page view): a new
   * page id, joined at `clock`, no lookups yet. The caller renumbers first
   * when `tagsExhausted()`.
   * @param {number} s
   * @param {number} clock
   */
  newPage (s, clock) {
    const at = s * SLOT_STRIDE
    this.state[at + PAGE] = ++this.lastTag
    this.state[at + SINCE] = clock
    this.state[at + TURN] = 0
  }

  /**
   * A new tag for the session in slot `s`: its index records go stale (it stopped serving).
   * The caller renumbers first when `tagsExhausted()`.
   * @param {number} s
   */
  retag (s) {
    this.state[s * SLOT_STRIDE + TAG] = ++this.lastTag
  }

  /**
   * Ends the session in slot `s`: its records go stale.
   * @param {number} s
   */
  close (s) {
    this.state[s * SLOT_STRIDE + TAG] = 0
    this.free[this.freeCount++] = s
  }

  /** @returns {boolean} whether the next `open`, `newPage` or `retag` could overflow the ids */
  tagsExhausted () {
    return this.lastTag >= this.tagLimit - 1
  }

  /**
   * Gives every open session a new tag and page id, both `slot + 1`, after
   * dropping every stale record from `tagged` (SlabLists of [slot, tag, …]
   * records) and `paged` ([slot, page, …]) and rewriting the live ones.
   * Afterwards no record carries an old id, so ids count on from `capacity`
   * without ever meeting one again. O(records), once in 2^30 sessions or pages.
   * @param {import('./slab-lists.js').SlabLists[]} tagged
   * @param {import('./slab-lists.js').SlabLists[]} [paged]
   */
  renumber (tagged, paged = []) {
    const state = this.state
    for (const [lists, field] of /** @type {const} */ ([[tagged, TAG], [paged, PAGE]])) {
      for (const l of lists) {
        for (let owner = 0; owner < l.ownerCap; owner++) {
          for (let pos = l.length(owner) - 1; pos >= 0; pos--) {
            const data = l.data(owner)
            const at = l.base(owner) + pos * l.stride
            const s = data[at]
            if (s < this.capacity && state[s * SLOT_STRIDE + TAG] !== 0 && state[s * SLOT_STRIDE + field] === data[at + 1]) data[at + 1] = s + 1
            else l.removeAt(owner, pos)
          }
        }
      }
    }
    for (let s = 0; s < this.capacity; s++) {
      if (state[s * SLOT_STRIDE + TAG] === 0) continue
      state[s * SLOT_STRIDE + TAG] = s + 1
      state[s * SLOT_STRIDE + PAGE] = s + 1
    }
    this.lastTag = this.capacity
  }
}
