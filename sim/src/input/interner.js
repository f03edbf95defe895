/**
 * Interns byte strings (URLs, client hosts) to dense integers straight from the
 * read buffer: no JavaScript string is made per log line, only one per
 * distinct value, and only when asked for. Open addressing over a byte arena.
 */
import { growTo } from '../batch.js'

/** Maps byte strings to ids 0, 1, 2, … in order of first appearance. */
export class ByteInterner {
  constructor () {
    /** distinct strings seen */
    this.size = 0
    this.arena = new Uint8Array(1 << 20)
    this.used = 0
    this.offsets = new Int32Array(1024)
    this.lengths = new Int32Array(1024)
    this.hashes = new Int32Array(1024)
    /** slots hold id + 1; 0 is empty */
    this.table = new Int32Array(4096)
    this.mask = 4095
  }

  /**
   * The id of `buf[start, end)`, adding it when new.
   * @param {Uint8Array} buf
   * @param {number} start
   * @param {number} end
   * @returns {number}
   */
  intern (buf, start, end) {
    let h = 0x811c9dc5
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 16777619)
    const len = end - start
    const table = this.table
    let slot = h & this.mask
    for (;;) {
      const v = table[slot]
      if (v === 0) break
      const id = v - 1
      if (this.hashes[id] === h && this.lengths[id] === len && this.equals(id, buf, start, len)) return id
      slot = (slot + 1) & this.mask
    }
    return this.add(buf, start, len, h, slot)
  }

  /**
   * @param {number} id
   * @param {Uint8Array} buf
   * @param {number} start
   * @param {number} len
   * @returns {boolean}
   */
  equals (id, buf, start, len) {
    const arena = this.arena
    const off = this.offsets[id]
    for (let i = 0; i < len; i++) if (arena[off + i] !== buf[start + i]) return false
    return true
  }

  /**
   * @param {Uint8Array} buf
   * @param {number} start
   * @param {number} len
   * @param {number} h
   * @param {number} slot free slot found by the probe
   * @returns {number} new id
   */
  add (buf, start, len, h, slot) {
    const id = this.size++
    if (this.used + len > this.arena.length) this.arena = growTo(this.arena, this.used + len)
    this.arena.set(buf.subarray(start, start + len), this.used)
    this.offsets = growTo(this.offsets, id + 1)
    this.lengths = growTo(this.lengths, id + 1)
    this.hashes = growTo(this.hashes, id + 1)
    this.offsets[id] = this.used
    this.lengths[id] = len
    this.hashes[id] = h
    this.used += len
    this.table[slot] = id + 1
    if (this.size * 2 > this.table.length) this.rehash()
    return id
  }

  /** Doubles the table. */
  rehash () {
    const table = new Int32Array(this.table.length * 2)
    const mask = table.length - 1
    for (let id = 0; id < this.size; id++) {
      let slot = this.hashes[id] & mask
      while (table[slot] !== 0) slot = (slot + 1) & mask
      table[slot] = id + 1
    }
    this.table = table
    this.mask = mask
  }

  /**
   * The string behind an id (latin1: logs are bytes, and this keeps them intact).
   * @param {number} id
   * @returns {string}
   */
  string (id) {
    const off = this.offsets[id]
    return Buffer.from(this.arena.buffer, this.arena.byteOffset + off, this.lengths[id]).toString('latin1')
  }
}
