/**
 * A ring of request batches in shared memory, from one producer thread (the
 * input worker: parser or generator, then the session window) to one consumer
 * (the thread running the engines). The producer blocks while the ring is
 * full; the consumer waits without blocking its event loop while it is empty.
 * Batches are read in place: the consumer's engines see the shared arrays.
 *
 * Control words (int32): HEAD batches published, TAIL batches consumed,
 * STATE running / done / failed, EVENTS bumped on every publish and state
 * change, so a consumer that waits on it can never miss a wake-up.
 */
import { BATCH_SIZE, RequestBatch } from '../batch.js'

const HEAD = 0
const TAIL = 1
const STATE = 2
const EVENTS = 3

export const RING_RUNNING = 0
export const RING_DONE = 1
export const RING_FAILED = 2

/**
 * @typedef {object} RingBuffers what crosses to the other thread (postMessage / workerData)
 * @property {SharedArrayBuffer} control
 * @property {SharedArrayBuffer} progress Float64 [fraction of the input read, requests read]
 * @property {SharedArrayBuffer} ts
 * @property {SharedArrayBuffer} client
 * @property {SharedArrayBuffer} object
 * @property {SharedArrayBuffer} bytes
 * @property {SharedArrayBuffer} flags
 * @property {SharedArrayBuffer} counts requests in each slot
 * @property {number} slots
 * @property {number} size requests a slot holds
 */

/** One side of the ring. */
export class BatchRing {
  /**
   * A new ring, or (given `buffers`) the other side of an existing one.
   * @param {{ slots?: number, size?: number, buffers?: RingBuffers }} [options]
   */
  constructor (options = {}) {
    const slots = options.buffers?.slots ?? options.slots ?? 8
    const size = options.buffers?.size ?? options.size ?? BATCH_SIZE
    const sab = (/** @type {number} */ bytes) => new SharedArrayBuffer(bytes)
    /** @type {RingBuffers} */
    this.buffers = options.buffers ?? {
      control: sab(16),
      progress: sab(16),
      ts: sab(slots * size * 8),
      client: sab(slots * size * 4),
      object: sab(slots * size * 4),
      bytes: sab(slots * size * 8),
      flags: sab(slots * size),
      counts: sab(slots * 4),
      slots,
      size
    }
    const b = this.buffers
    this.control = new Int32Array(b.control)
    /** [fraction of the input read, requests read], written by the producer */
    this.progress = new Float64Array(b.progress)
    this.counts = new Int32Array(b.counts)
    this.slots = slots
    /** each slot as a batch whose arrays are views of the shared memory */
    this.batches = Array.from({ length: slots }, (_, i) => {
      const batch = new RequestBatch(0)
      const at = i * size
      batch.capacity = size
      batch.ts = new Float64Array(b.ts, at * 8, size)
      batch.client = new Int32Array(b.client, at * 4, size)
      batch.object = new Int32Array(b.object, at * 4, size)
      batch.bytes = new Float64Array(b.bytes, at * 8, size)
      batch.flags = new Uint8Array(b.flags, at, size)
      return batch
    })
  }

  /**
   * Producer: copies `batch` into the next slot, waiting while the ring is full.
   * @param {RequestBatch} batch at most `size` requests
   */
  publish (batch) {
    const c = this.control
    const head = Atomics.load(c, HEAD)
    for (;;) {
      const tail = Atomics.load(c, TAIL)
      if (head - tail < this.slots) break
      Atomics.wait(c, TAIL, tail)
    }
    const slot = head % this.slots
    const to = this.batches[slot]
    const n = batch.n
    to.ts.set(batch.ts.subarray(0, n))
    to.client.set(batch.client.subarray(0, n))
    to.object.set(batch.object.subarray(0, n))
    to.bytes.set(batch.bytes.subarray(0, n))
    to.flags.set(batch.flags.subarray(0, n))
    this.counts[slot] = n
    Atomics.store(c, HEAD, head + 1)
    this.signal()
  }

  /**
   * Either side: the producer has finished (RING_DONE) or someone has failed
   * (RING_FAILED: the producer's input, or the thread itself).
   * @param {number} state
   */
  end (state) {
    Atomics.compareExchange(this.control, STATE, RING_RUNNING, state)
    this.signal()
  }

  /** Wakes whoever waits for an event. */
  signal () {
    Atomics.add(this.control, EVENTS, 1)
    Atomics.notify(this.control, EVENTS)
  }

  /**
   * Consumer: hands each published batch to `sink` in order, until the
   * producer is done. Waits asynchronously while the ring is empty, and lets
   * the event loop run at least every `yieldEvery` batches.
   * @param {(batch: RequestBatch) => void} sink
   * @param {{ yieldEvery?: number, onBatch?: () => void }} [options]
   * @returns {Promise<number>} the final state: RING_DONE or RING_FAILED
   */
  async consume (sink, options = {}) {
    const c = this.control
    const yieldEvery = options.yieldEvery ?? Infinity
    let tail = Atomics.load(c, TAIL)
    for (;;) {
      const events = Atomics.load(c, EVENTS)
      // STATE before HEAD: the producer publishes its last batch before it says done
      const state = Atomics.load(c, STATE)
      if (state === RING_FAILED) return state
      if (tail < Atomics.load(c, HEAD)) {
        const slot = tail % this.slots
        const batch = this.batches[slot]
        batch.n = this.counts[slot]
        sink(batch)
        Atomics.store(c, TAIL, ++tail)
        Atomics.notify(c, TAIL)
        options.onBatch?.()
        if (tail % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve))
        continue
      }
      if (state === RING_DONE) return state
      const wait = Atomics.waitAsync(c, EVENTS, events)
      if (wait.async) await wait.value
    }
  }
}
