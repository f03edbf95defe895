/**
 * Deadlines that all have one length (the store's timeout, a request's time to
 * its answer), kept with one timer for all of them instead of one each.
 *
 * A timer per request cost a Timeout object, a timer-list insertion and a
 * removal on the hot path, two to five times per transaction. Since every
 * deadline here is its start plus the same `ms`, they end in the order they
 * started: a FIFO (a ring of slots, so that a deadline allocates nothing that
 * outlives it) whose oldest entry is the next to end. The one timer waits for
 * the oldest entry not yet settled; entries settled meanwhile are passed over
 * when it fires, so under steady load it fires about once per `ms`.
 */

const INITIAL_SLOTS = 1024

export class Deadlines {
  /**
   * @param {number} ms every deadline's length
   * @param {() => number} [now] ms on a monotonic clock
   */
  constructor (ms, now = () => performance.now()) {
    this.ms = ms
    this.now = now
    /** when each slot's deadline ends */
    this.ends = new Float64Array(INITIAL_SLOTS)
    /** @type {((() => void) | null)[]} each slot's `onLate`, null once settled or fired */
    this.callbacks = new Array(INITIAL_SLOTS).fill(null)
    this.mask = INITIAL_SLOTS - 1
    /** the oldest deadline still in the ring (a serial number; its slot is `serial & mask`) */
    this.oldest = 0
    /** the serial number the next deadline gets */
    this.next = 0
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null
    this.firing = false
    this.fire = () => this.#fire()
  }

  /**
   * Start a deadline.
   * @param {() => void} onLate called once `ms` have passed, unless settled first
   * @returns {number} the deadline, for {@link settle}
   */
  start (onLate) {
    if (this.next - this.oldest > this.mask) this.#grow()
    const serial = this.next++
    this.ends[serial & this.mask] = this.now() + this.ms
    this.callbacks[serial & this.mask] = onLate
    if (this.timer === null && !this.firing) this.#arm(this.ms)
    return serial
  }

  /**
   * What the deadline bounded has finished: its `onLate` will not be called.
   * @param {number} serial as `start` returned it (-1, no deadline, is always in time)
   * @returns {boolean} whether it finished in time (false: `onLate` was called already)
   */
  settle (serial) {
    if (serial === -1) return true
    if (serial < this.oldest || this.callbacks[serial & this.mask] === null) return false
    this.callbacks[serial & this.mask] = null
    return true
  }

  /**
   * A promise that settles as `promise` does, or rejects with `error()` once
   * `ms` have passed (what `promise` does later is dropped).
   * @template T
   * @param {Promise<T>} promise
   * @param {() => Error} error
   * @returns {Promise<T>}
   */
  bound (promise, error) {
    return new Promise((resolve, reject) => {
      const serial = this.start(() => reject(error()))
      promise.then((value) => { this.settle(serial); resolve(value) }, (err) => { this.settle(serial); reject(err) })
    })
  }

  /** Drop every deadline unfired, and the timer (a coordinator that stops). */
  clear () {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.callbacks.fill(null)
    this.oldest = this.next
  }

  /** @param {number} ms */
  #arm (ms) {
    this.timer = setTimeout(this.fire, Math.max(1, Math.ceil(ms)))
    this.timer.unref()
  }

  #grow () {
    const slots = this.ends.length * 2
    const ends = new Float64Array(slots)
    /** @type {((() => void) | null)[]} */
    const callbacks = new Array(slots).fill(null)
    for (let serial = this.oldest; serial < this.next; serial++) {
      ends[serial & (slots - 1)] = this.ends[serial & this.mask]
      callbacks[serial & (slots - 1)] = this.callbacks[serial & this.mask]
    }
    this.ends = ends
    this.callbacks = callbacks
    this.mask = slots - 1
  }

  #fire () {
    this.timer = null
    this.firing = true
    const now = this.now()
    try {
      // Pass over the settled, call the late, stop at the first one still running in time.
      while (this.oldest < this.next) {
        const slot = this.oldest & this.mask
        const onLate = this.callbacks[slot]
        if (onLate !== null) {
          if (this.ends[slot] > now) break
          this.callbacks[slot] = null
          this.oldest++
          onLate()
        } else {
          this.oldest++
        }
      }
    } finally {
      this.firing = false
      if (this.oldest < this.next) this.#arm(this.ends[this.oldest & this.mask] - now)
    }
  }
}
