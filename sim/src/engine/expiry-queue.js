/**
 * When clients go offline: a FIFO of (client, time). Every time pushed is a
 * request time plus the same linger, and request times never go backwards,
 * so the queue is sorted without a heap. An entry whose client has since made
 * another request is stale; the engine checks that when it pops.
 */

/** A growable ring of (client, time) in time order. */
export class ExpiryQueue {
  constructor () {
    this.client = new Int32Array(1 << 16)
    this.time = new Float64Array(1 << 16)
    this.mask = (1 << 16) - 1
    this.head = 0
    this.tail = 0
  }

  /** @returns {boolean} */
  empty () {
    return this.head === this.tail
  }

  /**
   * @param {number} c
   * @param {number} time not before the last time pushed
   */
  push (c, time) {
    if (this.tail - this.head === this.client.length) this.grow()
    const p = this.tail & this.mask
    this.client[p] = c
    this.time[p] = time
    this.tail++
  }

  /** @returns {number} time of the oldest entry (the queue is not empty) */
  peekTime () {
    return this.time[this.head & this.mask]
  }

  /** @returns {number} client of the oldest entry, which is removed */
  shift () {
    return this.client[this.head++ & this.mask]
  }

  grow () {
    const cap = this.client.length * 2
    const mask = cap - 1
    const client = new Int32Array(cap)
    const time = new Float64Array(cap)
    for (let s = this.head; s < this.tail; s++) {
      client[s & mask] = this.client[s & this.mask]
      time[s & mask] = this.time[s & this.mask]
    }
    this.client = client
    this.time = time
    this.mask = mask
  }
}
