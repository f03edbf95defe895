/**
 * Many short, unordered lists of fixed-size integer records in one Int32Array:
 * each owner (an object, a client) has a block of 2^k slots, grown by moving
 * to the next size class; freed blocks go on per-class free lists. Removal
 * moves the last record into the hole and says which item moved, so callers
 * can keep each item's position. No allocation per owner or per item, and a
 * list's records are contiguous, so scans are sequential.
 */
import { growTo } from './batch.js'

/** offsets in the per-owner record `meta` */
export const OFF = 0 // first slot of the block, -1 none
export const LEN = 1 // records in the list
export const CLS = 2 // block capacity is 2^CLS slots

/** Lists of `stride`-int records, one list per owner id. */
export class SlabLists {
  /** @param {number} stride int32 fields per record; field 0 is the item id */
  constructor (stride) {
    this.stride = stride
    /** per owner, [o*4 + OFF | LEN | CLS] */
    this.meta = new Int32Array(0)
    this.ownerCap = 0
    this.ensureOwners(1024)
    /** slot s holds a record at pool[s*stride …] */
    this.pool = new Int32Array(stride << 14)
    /** slots handed out so far */
    this.used = 0
    /** per size class: first free block, linked through the block's first field */
    this.free = new Int32Array(32).fill(-1)
    /** records over all lists */
    this.total = 0
  }

  /** @param {number} n owners to make room for */
  ensureOwners (n) {
    if (n <= this.ownerCap) return
    const old = this.ownerCap
    let cap = Math.max(1024, old)
    while (cap < n) cap *= 2
    this.meta = growTo(this.meta, cap * 4)
    for (let o = old; o < cap; o++) this.meta[o * 4 + OFF] = -1
    this.ownerCap = cap
  }

  /**
   * @param {number} owner
   * @returns {number} records in the owner's list
   */
  length (owner) {
    return this.meta[owner * 4 + LEN]
  }

  /**
   * @param {number} owner
   * @returns {number} index in `pool` of the owner's first record (valid until the next add)
   */
  base (owner) {
    return this.meta[owner * 4 + OFF] * this.stride
  }

  /**
   * Appends a record whose first field is `item`; the caller fills the other fields at the returned index.
   * @param {number} owner
   * @param {number} item
   * @returns {number} the record's position in the list
   */
  push (owner, item) {
    const meta = this.meta
    const m = owner * 4
    let off = meta[m + OFF]
    const n = meta[m + LEN]
    if (off === -1) {
      off = meta[m + OFF] = this.alloc(1)
      meta[m + CLS] = 1
    } else if (n === 1 << meta[m + CLS]) {
      const k = meta[m + CLS] + 1
      const next = this.alloc(k)
      this.pool.copyWithin(next * this.stride, off * this.stride, (off + n) * this.stride)
      this.release(off, k - 1)
      off = meta[m + OFF] = next
      meta[m + CLS] = k
    }
    this.pool[(off + n) * this.stride] = item
    meta[m + LEN] = n + 1
    this.total++
    return n
  }

  /**
   * Removes the record at `pos`, moving the last record into its place.
   * @param {number} owner
   * @param {number} pos
   * @returns {number} the item now at `pos`, or -1 if `pos` was the last
   */
  removeAt (owner, pos) {
    const meta = this.meta
    const m = owner * 4
    const off = meta[m + OFF]
    const n = meta[m + LEN] - 1
    const stride = this.stride
    meta[m + LEN] = n
    this.total--
    let moved = -1
    if (pos !== n) {
      const pool = this.pool
      const from = (off + n) * stride
      const to = (off + pos) * stride
      for (let f = 0; f < stride; f++) pool[to + f] = pool[from + f]
      moved = pool[to]
    }
    if (n === 0) {
      this.release(off, meta[m + CLS])
      meta[m + OFF] = -1
    }
    return moved
  }

  /**
   * Empties the owner's list and frees its block.
   * @param {number} owner
   */
  clear (owner) {
    const m = owner * 4
    const off = this.meta[m + OFF]
    if (off === -1) return
    this.total -= this.meta[m + LEN]
    this.release(off, this.meta[m + CLS])
    this.meta[m + OFF] = -1
    this.meta[m + LEN] = 0
  }

  /**
   * @param {number} k size class
   * @returns {number} first slot of a free block of 2^k slots
   */
  alloc (k) {
    const f = this.free[k]
    if (f !== -1) {
      this.free[k] = this.pool[f * this.stride]
      return f
    }
    const off = this.used
    this.used += 1 << k
    if (this.used * this.stride > this.pool.length) this.pool = growTo(this.pool, this.used * this.stride)
    return off
  }

  /**
   * @param {number} off
   * @param {number} k
   */
  release (off, k) {
    this.pool[off * this.stride] = this.free[k]
    this.free[k] = off
  }
}
