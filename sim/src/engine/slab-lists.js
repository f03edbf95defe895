/**
 * Many short, unordered lists of fixed-size integer records in one Int32Array:
 * each owner (an object, a client) has a block of 2^k slots, grown by moving
 * to the next size class; freed blocks go on per-class stacks of free blocks
 * (kept apart from the blocks, so taking one reads no cold memory). Removal
 * moves the last record into the hole and says which item moved, so callers
 * can keep each item's position. No allocation per owner or per item, and a
 * list's records are contiguous, so scans are sequential.
 *
 * Optionally the first few records live in the owner's own record in `meta`
 * (`inline`): a list that short costs one cache line, and taking a block only
 * starts when it outgrows that. Records are then in `data(owner)` (`meta` or
 * `pool`) from `base(owner)`; without `inline` they are always in `pool`.
 */
import { growTo } from '../batch.js'

/** offsets in the per-owner record `meta` */
export const OFF = 0 // first slot of the block, NONE for none (the records, if any, are inline)
export const LEN = 1 // records in the list
export const CLS = 2 // block capacity is 2^CLS slots
/** `OFF` of a list with no block; slot 0 is never handed out, so zeroed memory is a valid empty list */
export const NONE = 0
/** where inline records start in an owner's record */
const INLINE_AT = 4

/** Lists of `stride`-int records, one list per owner id. */
export class SlabLists {
  /**
   * @param {number} stride int32 fields per record (at least 2); field 0 is the item id
   * @param {number} [inline] records kept in the owner's own record before it takes a block
   * @param {number} [firstBlock] records the first block holds at least (fewer moves while lists grow)
   */
  constructor (stride, inline = 0, firstBlock = 2) {
    if (!(stride >= 2)) throw new TypeError(`a SlabLists record has at least 2 fields, not ${stride}`)
    this.stride = stride
    this.inline = inline
    /** int32 fields per owner record: a power of two, so records never straddle cache lines */
    this.metaStride = 4
    while (this.metaStride < INLINE_AT + inline * stride) this.metaStride *= 2
    /** the size class of the first block a list takes (twice its inline room, at least `firstBlock` slots) */
    this.firstClass = 1
    while (1 << this.firstClass < Math.max(2 * inline, firstBlock)) this.firstClass++
    /** per owner, [o*metaStride + OFF | LEN | CLS | (unused) | inline records …] */
    this.meta = new Int32Array(0)
    this.ownerCap = 0
    this.ensureOwners(1024)
    /** slot s holds a record at pool[s*stride …] */
    this.pool = new Int32Array(stride << 14)
    /** slots handed out so far (slot 0 never is: see NONE) */
    this.used = 1
    /** per size class: a stack of free blocks' first slots */
    this.free = Array.from({ length: 32 }, () => new Int32Array(16))
    /** per size class: blocks on its stack */
    this.freeCount = new Int32Array(32)
    /** records over all lists */
    this.total = 0
  }

  /** @param {number} n owners to make room for */
  ensureOwners (n) {
    if (n <= this.ownerCap) return
    let cap = Math.max(1024, this.ownerCap)
    while (cap < n) cap *= 2
    this.meta = growTo(this.meta, cap * this.metaStride)
    this.ownerCap = cap
  }

  /**
   * @param {number} owner
   * @returns {number} records in the owner's list
   */
  length (owner) {
    return this.meta[owner * this.metaStride + LEN]
  }

  /**
   * @param {number} owner
   * @returns {Int32Array} the array holding the owner's records: `meta` while they are inline, else `pool`
   */
  data (owner) {
    return this.meta[owner * this.metaStride + OFF] === NONE ? this.meta : this.pool
  }

  /**
   * @param {number} owner
   * @returns {number} index in `data(owner)` of the owner's first record (valid until the next add)
   */
  base (owner) {
    const m = owner * this.metaStride
    const off = this.meta[m + OFF]
    return off === NONE ? m + INLINE_AT : off * this.stride
  }

  /**
   * Appends a record whose first two fields are `item` and `second`; the
   * caller fills any others in `data(owner)` at `base(owner) + position * stride`.
   * @param {number} owner
   * @param {number} item
   * @param {number} second field 1 of the record (the lists here all have one)
   * @returns {number} the record's position in the list
   */
  push (owner, item, second) {
    const meta = this.meta
    const m = owner * this.metaStride
    const off = meta[m + OFF]
    const n = meta[m + LEN]
    // the common case, small enough to be inlined: a block with room
    if (off === NONE || n === 1 << meta[m + CLS]) return this.pushSlow(owner, item, second)
    const at = (off + n) * this.stride
    const pool = this.pool
    pool[at] = item
    pool[at + 1] = second
    meta[m + LEN] = n + 1
    this.total++
    return n
  }

  /**
   * `push` into an inline list, or into a full block (moving to a larger one).
   * @param {number} owner
   * @param {number} item
   * @param {number} second
   * @returns {number} the record's position in the list
   */
  pushSlow (owner, item, second) {
    const meta = this.meta
    const stride = this.stride
    const m = owner * this.metaStride
    let off = meta[m + OFF]
    const n = meta[m + LEN]
    if (off === NONE) {
      if (n < this.inline) {
        const at = m + INLINE_AT + n * stride
        meta[at] = item
        meta[at + 1] = second
        meta[m + LEN] = n + 1
        this.total++
        return n
      }
      // outgrew the inline room (or has none): move to a block
      const k = this.firstClass
      off = this.alloc(k)
      const pool = this.pool
      for (let i = 0, to = off * stride, len = n * stride; i < len; i++) pool[to + i] = meta[m + INLINE_AT + i]
      meta[m + OFF] = off
      meta[m + CLS] = k
    } else {
      const k = meta[m + CLS] + 1
      const next = this.alloc(k)
      const pool = this.pool
      const to = next * stride
      const from = off * stride
      const len = n * stride
      // short blocks by loop: for them the builtin's call costs more than the copy
      if (len > 64) pool.copyWithin(to, from, from + len)
      else for (let i = 0; i < len; i++) pool[to + i] = pool[from + i]
      this.release(off, k - 1)
      off = meta[m + OFF] = next
      meta[m + CLS] = k
    }
    const at = (off + n) * stride
    this.pool[at] = item
    this.pool[at + 1] = second
    meta[m + LEN] = n + 1
    this.total++
    return n
  }

  /**
   * Removes the record at `pos`, moving the last record into its place. A list
   * in a block stays there until it empties.
   * @param {number} owner
   * @param {number} pos
   * @returns {number} the item now at `pos`, or -1 if `pos` was the last
   */
  removeAt (owner, pos) {
    const meta = this.meta
    const m = owner * this.metaStride
    const off = meta[m + OFF]
    const n = meta[m + LEN] - 1
    const stride = this.stride
    meta[m + LEN] = n
    this.total--
    let moved = -1
    if (pos !== n) {
      const arr = off === NONE ? meta : this.pool
      const base = off === NONE ? m + INLINE_AT : off * stride
      const from = base + n * stride
      const to = base + pos * stride
      for (let f = 0; f < stride; f++) arr[to + f] = arr[from + f]
      moved = arr[to]
    }
    if (n === 0 && off !== NONE) {
      this.release(off, meta[m + CLS])
      meta[m + OFF] = NONE
    }
    return moved
  }

  /**
   * Empties the owner's list and frees its block.
   * @param {number} owner
   */
  clear (owner) {
    const m = owner * this.metaStride
    const off = this.meta[m + OFF]
    this.total -= this.meta[m + LEN]
    this.meta[m + LEN] = 0
    if (off === NONE) return
    this.release(off, this.meta[m + CLS])
    this.meta[m + OFF] = NONE
  }

  /**
   * @param {number} k size class
   * @returns {number} first slot of a free block of 2^k slots
   */
  alloc (k) {
    const n = this.freeCount[k]
    if (n > 0) {
      this.freeCount[k] = n - 1
      return this.free[k][n - 1]
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
    const n = this.freeCount[k]
    if (n === this.free[k].length) this.free[k] = growTo(this.free[k], n + 1)
    this.free[k][n] = off
    this.freeCount[k] = n + 1
  }
}
