/**
 * The coordinator's content-location index, as the simulator keeps it: per
 * object, a list of holder entries with swap-removal, like the coordinator's
 * stores. A record is (slot, tag, chosen): the session with that tag
 * (online-slots.js) listed the object, and a lookup of this object last
 * handed it out first at the coordinator's clock `chosen` (0 = never). Recency
 * is the entry's, not the peer's, as in the coordinator's store, where an
 * asset's holders are one hash of peer → last chosen. When a session starts
 * the client lists all it holds again, as new entries; a record of a session
 * that has ended is stale. The coordinator drops a peer's entries when it
 * disconnects; here stale records are dropped lazily, when a lookup meets
 * them, which gives the same lookups without touching every holding of every
 * leaving client.
 */
import { SlabLists } from './slab-lists.js'

/** fields of a record, int32 each: the holder's slot */
export const H_SLOT = 0
/** the tag of the session that listed the object */
export const H_TAG = 1
/** the coordinator's clock when a lookup of this object last marked this entry (0 = never) */
export const H_CHOSEN = 2
/** int32 fields per record */
export const H_STRIDE = 3

/** Holders of every object. */
export class HolderIndex {
  constructor () {
    /**
     * per object: records [slot, tag, chosen]. One lives in the object's own
     * record (a 32-byte line share), so an object with one holder, most of
     * them, costs no block; two would double every object's record.
     */
    this.lists = new SlabLists(H_STRIDE, 1)
  }

  /** @param {number} n objects to make room for */
  ensureObjects (n) {
    this.lists.ensureOwners(n)
  }

  /**
   * @param {number} o
   * @returns {number} records listed for `o`, stale or not
   */
  count (o) {
    return this.lists.length(o)
  }

  /** @returns {number} records over all objects */
  get listed () {
    return this.lists.total
  }

  /**
   * Lists a new entry: never chosen.
   * @param {number} o
   * @param {number} slot
   * @param {number} tag
   */
  add (o, slot, tag) {
    const lists = this.lists
    const pos = lists.push(o, slot, tag)
    lists.data(o)[lists.base(o) + pos * H_STRIDE + H_CHOSEN] = 0
  }

  /**
   * @param {number} o
   * @param {number} pos
   * @returns {number} when a lookup of `o` last marked the entry at `pos` (0 = never)
   */
  chosen (o, pos) {
    return this.lists.data(o)[this.lists.base(o) + pos * H_STRIDE + H_CHOSEN]
  }

  /**
   * Sets when the entry at `pos` was last marked (the engine's lookup writes
   * the field in place instead; tests set up cases with this).
   * @param {number} o
   * @param {number} pos
   * @param {number} at
   */
  setChosen (o, pos, at) {
    this.lists.data(o)[this.lists.base(o) + pos * H_STRIDE + H_CHOSEN] = at
  }

  /**
   * Moves every entry's `chosen` back by `shift`, those older than that to 0
   * (never): the clock's rebase (peer-lookup.js). O(objects + records).
   * @param {number} shift
   */
  shiftChosen (shift) {
    const lists = this.lists
    for (let o = 0; o < lists.ownerCap; o++) {
      const n = lists.length(o)
      if (n === 0) continue
      const data = lists.data(o)
      const base = lists.base(o)
      for (let at = base + H_CHOSEN, end = base + n * H_STRIDE; at < end; at += H_STRIDE) data[at] = Math.max(0, data[at] - shift)
    }
  }

  /**
   * Drops the record at `pos` (the last record moves there).
   * @param {number} o
   * @param {number} pos
   */
  removeAt (o, pos) {
    this.lists.removeAt(o, pos)
  }

  /**
   * Drops the record (slot, tag) of `o`, if listed (an eviction).
   * @param {number} o
   * @param {number} slot
   * @param {number} tag
   */
  remove (o, slot, tag) {
    const lists = this.lists
    const pool = lists.data(o)
    const base = lists.base(o)
    const n = lists.length(o)
    for (let pos = 0; pos < n; pos++) {
      const at = base + pos * H_STRIDE
      if (pool[at + H_SLOT] === slot && pool[at + H_TAG] === tag) {
        lists.removeAt(o, pos)
        return
      }
    }
  }
}
