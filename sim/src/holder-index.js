/**
 * The coordinator's content-location index, as the simulator keeps it: per
 * object, a list of holders with swap-removal, like the coordinator's memory
 * store. A record is (slot, tag): the session with that tag (online-slots.js)
 * listed the object. When a session starts the client lists all it holds
 * again; a record of a session that has ended is stale. The coordinator
 * drops a peer's records when it disconnects; here stale records are dropped
 * lazily, when a lookup meets them, which gives the same lookups without
 * touching every holding of every leaving client.
 */
import { SlabLists } from './slab-lists.js'

/** Holders of every object. */
export class HolderIndex {
  constructor () {
    /**
     * per object: records [slot, tag]; the first two live in the
     * object's own record, so an object with few holders costs one cache line
     */
    this.lists = new SlabLists(2, 2)
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
   * @param {number} o
   * @param {number} slot
   * @param {number} tag
   */
  add (o, slot, tag) {
    this.lists.push(o, slot, tag)
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
      if (pool[base + pos * 2] === slot && pool[base + pos * 2 + 1] === tag) {
        lists.removeAt(o, pos)
        return
      }
    }
  }
}
