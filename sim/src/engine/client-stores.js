/**
 * Every client's store at once, laid out for a replay whose cost is cache
 * misses. A client's entries are one contiguous list of records
 * [object, size, last use] (SlabLists): a client's requests come in bursts,
 * so its list is warm, and finding an object in a small store is a short
 * sequential scan. Stores that grow past `SCAN_LIMIT` entries are also
 * indexed in an open-addressing table keyed by (client, object). Recency is
 * a doubly linked list through the records, by position within the client's
 * list, so eviction is O(1) and touches only that client's memory.
 * A hundred million entries cost no garbage collection.
 */
import { growTo } from '../batch.js'
import { SlabLists } from './slab-lists.js'

/** fields of a store record */
export const S_OBJECT = 0
export const S_SIZE = 1 // bytes, stored as int32 and read back with `>>> 0`
export const S_PREV = 2 // position of the next more recently used entry, -1 for the most recent
export const S_NEXT = 3 // position of the next less recently used entry, -1 for the least recent
/** int32 fields per record */
const STRIDE = 4
/** a store with more entries than this is indexed by the table */
export const SCAN_LIMIT = 64
/** largest object a store keeps, bytes */
export const MAX_ENTRY_BYTES = 0xffffffff

/**
 * @param {number} c
 * @param {number} o
 * @returns {number} 32-bit hash of the pair
 */
function pairHash (c, o) {
  let h = Math.imul(c, 0x9e3779b1) ^ Math.imul(o ^ (o >>> 15), 0x85ebca77)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

/** All clients' LRU stores. */
export class ClientStores {
  constructor () {
    // a visit fetches 6–16 objects: a first block that holds them needs no moves while it fills
    /** per client, records [object, size, prev, next] */
    this.lists = new SlabLists(STRIDE, 0, 16)
    /** per client, positions of [2c] the most and [2c+1] the least recently used entry */
    this.ends = new Int32Array(2048).fill(-1)
    /** bytes each client holds */
    this.bytes = new Float64Array(1024)
    /** 1 for clients whose store is indexed by the table */
    this.indexed = new Uint8Array(1024)
    /** entries held, over all clients */
    this.live = 0
    /** table slots [client (-1 empty), object, position, 0] */
    this.table = new Int32Array(4 << 10).fill(-1)
    this.slots = 1 << 10
    this.tableUsed = 0
  }

  /** @param {number} n clients to make room for */
  ensureClients (n) {
    this.lists.ensureOwners(n)
    if (n > this.bytes.length) {
      this.bytes = growTo(this.bytes, n)
      this.indexed = growTo(this.indexed, n)
      this.ends = growTo(this.ends, 2 * this.bytes.length, -1)
    }
  }

  /**
   * @param {number} c
   * @returns {number} entries `c` holds
   */
  count (c) {
    return this.lists.length(c)
  }

  /**
   * @param {number} c
   * @param {number} pos
   * @returns {number} the object at `pos` of `c`'s store
   */
  objectAt (c, pos) {
    return this.lists.pool[this.lists.base(c) + pos * 4 + S_OBJECT]
  }

  /**
   * @param {number} c
   * @param {number} o
   * @returns {number} position of `o` in `c`'s store, or -1
   */
  find (c, o) {
    if (this.indexed[c] === 1) return this.tableFind(c, o)
    const lists = this.lists
    const n = lists.length(c)
    if (n === 0) return -1
    const pool = lists.pool
    const base = lists.base(c)
    for (let i = 0; i < n; i++) if (pool[base + i * STRIDE] === o) return i
    return -1
  }

  /**
   * Marks an entry most recently used.
   * @param {number} c
   * @param {number} pos
   */
  touch (c, pos) {
    if (this.ends[2 * c] === pos) return
    const base = this.lists.base(c)
    this.unlink(c, base, pos)
    this.linkFront(c, base, pos)
  }

  /**
   * Adds `o` to `c`'s store; the caller made room and checked it is absent.
   * @param {number} c
   * @param {number} o
   * @param {number} size ≤ MAX_ENTRY_BYTES
   */
  insert (c, o, size) {
    const lists = this.lists
    const pos = lists.push(c, o, size) // S_SIZE is field 1
    this.linkFront(c, lists.base(c), pos)
    this.bytes[c] += size
    this.live++
    if (this.indexed[c] === 1) this.tableInsert(c, o, pos)
    else if (pos + 1 > SCAN_LIMIT) this.index(c)
  }

  /**
   * @param {number} c a client holding at least one entry
   * @returns {number} position of its least recently used entry
   */
  lruOf (c) {
    return this.ends[2 * c + 1]
  }

  /**
   * Removes the entry at `pos` of `c`'s store (the last entry moves there).
   * @param {number} c
   * @param {number} pos
   */
  removeAt (c, pos) {
    const lists = this.lists
    const pool = lists.pool
    const base = lists.base(c)
    const at = base + pos * STRIDE
    const o = pool[at + S_OBJECT]
    this.bytes[c] -= pool[at + S_SIZE] >>> 0
    this.live--
    if (this.indexed[c] === 1) this.tableDelete(c, o)
    this.unlink(c, base, pos)
    const moved = lists.removeAt(c, pos)
    if (moved === -1) return
    // the record from `last` now sits at `pos`: point its neighbours (and the ends) at it
    const prev = pool[at + S_PREV]
    const next = pool[at + S_NEXT]
    if (prev !== -1) pool[base + prev * 4 + S_NEXT] = pos
    else this.ends[2 * c] = pos
    if (next !== -1) pool[base + next * 4 + S_PREV] = pos
    else this.ends[2 * c + 1] = pos
    if (this.indexed[c] === 1) this.table[this.tableSlot(c, moved) * 4 + 2] = pos
  }

  /**
   * @param {number} c
   * @param {number} base
   * @param {number} pos
   */
  linkFront (c, base, pos) {
    const pool = this.lists.pool
    const head = this.ends[2 * c]
    pool[base + pos * 4 + S_PREV] = -1
    pool[base + pos * 4 + S_NEXT] = head
    if (head !== -1) pool[base + head * 4 + S_PREV] = pos
    else this.ends[2 * c + 1] = pos
    this.ends[2 * c] = pos
  }

  /**
   * @param {number} c
   * @param {number} base
   * @param {number} pos
   */
  unlink (c, base, pos) {
    const pool = this.lists.pool
    const prev = pool[base + pos * 4 + S_PREV]
    const next = pool[base + pos * 4 + S_NEXT]
    if (prev !== -1) pool[base + prev * 4 + S_NEXT] = next
    else this.ends[2 * c] = next
    if (next !== -1) pool[base + next * 4 + S_PREV] = prev
    else this.ends[2 * c + 1] = prev
  }

  /**
   * Indexes all of `c`'s entries in the table (its store outgrew scanning).
   * @param {number} c
   */
  index (c) {
    this.indexed[c] = 1
    const n = this.lists.length(c)
    for (let i = 0; i < n; i++) this.tableInsert(c, this.objectAt(c, i), i)
  }

  /**
   * @param {number} c
   * @param {number} o
   * @returns {number} the slot holding (c, o), or -1
   */
  tableSlot (c, o) {
    const table = this.table
    const mask = this.slots - 1
    let s = pairHash(c, o) & mask
    for (;;) {
      const k = table[s * 4]
      if (k === -1) return -1
      if (k === c && table[s * 4 + 1] === o) return s
      s = (s + 1) & mask
    }
  }

  /**
   * @param {number} c
   * @param {number} o
   * @returns {number} position, or -1
   */
  tableFind (c, o) {
    const s = this.tableSlot(c, o)
    return s === -1 ? -1 : this.table[s * 4 + 2]
  }

  /**
   * @param {number} c
   * @param {number} o
   * @param {number} pos
   */
  tableInsert (c, o, pos) {
    if ((this.tableUsed + 1) * 2 > this.slots) this.rehash(this.slots * 2)
    const table = this.table
    const mask = this.slots - 1
    let s = pairHash(c, o) & mask
    while (table[s * 4] !== -1) s = (s + 1) & mask
    table[s * 4] = c
    table[s * 4 + 1] = o
    table[s * 4 + 2] = pos
    this.tableUsed++
  }

  /**
   * Backward-shift deletion (no tombstones).
   * @param {number} c
   * @param {number} o
   */
  tableDelete (c, o) {
    const table = this.table
    const mask = this.slots - 1
    let i = this.tableSlot(c, o)
    let j = i
    for (;;) {
      j = (j + 1) & mask
      const kc = table[j * 4]
      if (kc === -1) break
      const k = pairHash(kc, table[j * 4 + 1]) & mask
      // move j back to i unless its home k lies cyclically in (i, j]
      if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
        table.copyWithin(i * 4, j * 4, j * 4 + 4)
        i = j
      }
    }
    table[i * 4] = -1
    this.tableUsed--
  }

  /** @param {number} slots new slot count (power of two) */
  rehash (slots) {
    const old = this.table
    const oldSlots = this.slots
    this.table = new Int32Array(slots * 4).fill(-1)
    this.slots = slots
    this.tableUsed = 0
    for (let s = 0; s < oldSlots; s++) {
      if (old[s * 4] !== -1) this.tableInsert(old[s * 4], old[s * 4 + 1], old[s * 4 + 2])
    }
  }
}
