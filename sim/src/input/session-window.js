/**
 * Looks ahead one session gap so the model knows, at each request, whether
 * the same client asks again within the gap (its session goes on, so it stays
 * online until then) or not (it lingers, then leaves). Requests wait in a ring
 * until the newest time read is more than a gap past them; then they are final
 * and go to the engines in order. Times that go backwards (logs written at
 * request completion) are clamped to the latest time seen and counted.
 */
import { FLAG_CONT, RequestBatch, growTo } from '../batch.js'

/** Annotates requests with FLAG_CONT and hands them on in batches. */
export class SessionWindow {
  /**
   * @param {number} gap seconds: a longer pause ends a session
   * @param {(batch: RequestBatch) => void} sink receives each finished batch; must be done with it on return
   */
  constructor (gap, sink) {
    this.gap = gap
    this.sink = sink
    this.cap = 1 << 16
    this.mask = this.cap - 1
    this.ts = new Float64Array(this.cap)
    this.client = new Int32Array(this.cap)
    this.object = new Int32Array(this.cap)
    this.bytes = new Float64Array(this.cap)
    this.flags = new Uint8Array(this.cap)
    /** sequence numbers: head is the oldest waiting request, tail the next free */
    this.head = 0
    this.tail = 0
    /** per client, [2c] sequence number (-1 none) and [2c+1] time of its latest request read */
    this.last = new Float64Array(2048).fill(-1)
    this.newest = -Infinity
    /** requests whose time went backwards and was clamped */
    this.reordered = 0
    this.out = new RequestBatch()
  }

  /** @param {RequestBatch} b */
  push (b) {
    for (let i = 0; i < b.n; i++) {
      let t = b.ts[i]
      if (t < this.newest) {
        t = this.newest
        this.reordered++
      } else {
        this.newest = t
        this.drain(t - this.gap)
      }
      const c = b.client[i]
      if (2 * c >= this.last.length) this.last = growTo(this.last, 2 * c + 2, -1)
      const prev = this.last[2 * c]
      if (prev >= this.head && t - this.last[2 * c + 1] <= this.gap) this.flags[prev & this.mask] |= FLAG_CONT
      if (this.tail - this.head === this.cap) this.grow()
      const p = this.tail & this.mask
      this.ts[p] = t
      this.client[p] = c
      this.object[p] = b.object[i]
      this.bytes[p] = b.bytes[i]
      this.flags[p] = b.flags[i] & ~FLAG_CONT
      this.last[2 * c] = this.tail
      this.last[2 * c + 1] = t
      this.tail++
    }
  }

  /**
   * Sends on every waiting request older than `before`.
   * @param {number} before
   */
  drain (before) {
    const out = this.out
    while (this.head < this.tail) {
      const p = this.head & this.mask
      if (this.ts[p] >= before) break
      out.push(this.ts[p], this.client[p], this.object[p], this.bytes[p], this.flags[p])
      this.head++
      if (out.full()) {
        this.sink(out)
        out.n = 0
      }
    }
  }

  /** Sends on everything still waiting (end of input). */
  flush () {
    this.drain(Infinity)
    if (this.out.n > 0) this.sink(this.out)
    this.out.n = 0
  }

  /** Doubles the ring, keeping each request at `seq & mask`. */
  grow () {
    const cap = this.cap * 2
    const mask = cap - 1
    const ts = new Float64Array(cap)
    const client = new Int32Array(cap)
    const object = new Int32Array(cap)
    const bytes = new Float64Array(cap)
    const flags = new Uint8Array(cap)
    for (let s = this.head; s < this.tail; s++) {
      const a = s & this.mask
      const z = s & mask
      ts[z] = this.ts[a]
      client[z] = this.client[a]
      object[z] = this.object[a]
      bytes[z] = this.bytes[a]
      flags[z] = this.flags[a]
    }
    Object.assign(this, { cap, mask, ts, client, object, bytes, flags })
  }
}
