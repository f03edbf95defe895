/**
 * An in-memory RTCDataChannel pair for Node tests of the peer protocol:
 * messages arrive asynchronously, binary ones as ArrayBuffer copies, and
 * `bufferedAmount` grows on send and drains on delivery, firing
 * `bufferedamountlow` when it crosses the threshold — enough to exercise
 * framing and backpressure without WebRTC. A channel given a `link` sends
 * over a line of that rate and one-way latency: each message leaves once the
 * line has carried the ones before it, and arrives `latencyMs` later.
 */
export class FakeChannel extends EventTarget {
  constructor () {
    super()
    this.readyState = 'open'
    this.binaryType = 'blob'
    this.bufferedAmount = 0
    this.bufferedAmountLowThreshold = 0
    /** highest bufferedAmount seen right after a send */
    this.maxBuffered = 0
    this.lowEvents = 0
    /** @type {(string | Uint8Array)[]} everything sent, as sent */
    this.sent = []
    /** @type {FakeChannel | null} */
    this.peer = null
    /** @type {((data: string | Uint8Array) => string | Uint8Array | null) | null} rewrites (or drops, with null) outgoing messages */
    this.tap = null
    /** whether it fires `bufferedamountlow` (node-webrtc never does) */
    this.lowEventsFire = true
    /** @type {{ latencyMs: number, bytesPerMs: number } | null} the line it sends over (null: at once) */
    this.link = null
    /** when the line is free of what was sent before (performance.now()) */
    this.lineFree = 0
    /** @type {{ at: number, deliver: () => void }[]} messages on the line, and when each arrives */
    this.onLine = []
  }

  /**
   * As a browser's channel does, also calls the `on<type>` handler.
   * @param {Event} event
   */
  dispatchEvent (event) {
    const handled = super.dispatchEvent(event)
    const handler = /** @type {any} */ (this)[`on${event.type}`]
    if (typeof handler === 'function') handler.call(this, event)
    return handled
  }

  /** @param {string | ArrayBufferView} data */
  send (data) {
    if (this.readyState !== 'open') throw new Error('InvalidStateError: channel not open')
    let out = typeof data === 'string' ? data : new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))
    this.sent.push(out)
    if (this.tap) {
      const t = this.tap(out)
      if (t === null) return
      out = t
    }
    const size = typeof out === 'string' ? out.length : out.byteLength
    this.bufferedAmount += size
    this.maxBuffered = Math.max(this.maxBuffered, this.bufferedAmount)
    const drained = () => {
      const before = this.bufferedAmount
      this.bufferedAmount -= size
      if (this.lowEventsFire && before > this.bufferedAmountLowThreshold && this.bufferedAmount <= this.bufferedAmountLowThreshold) {
        this.lowEvents++
        this.dispatchEvent(new Event('bufferedamountlow'))
      }
    }
    const deliver = () => {
      if (this.peer?.readyState !== 'open') return
      const event = Object.assign(new Event('message'), { data: typeof out === 'string' ? out : out.buffer })
      this.peer.dispatchEvent(event)
    }
    if (!this.link) {
      setImmediate(() => {
        drained()
        deliver()
      })
      return
    }
    const now = performance.now()
    this.lineFree = Math.max(now, this.lineFree) + size / this.link.bytesPerMs
    setTimeout(drained, this.lineFree - now)
    this.onLine.push({ at: this.lineFree + this.link.latencyMs, deliver })
    if (this.onLine.length === 1) this.#arrive()
  }

  /** Deliver what is due on the line, in the order sent; wait for the next. */
  #arrive () {
    const next = this.onLine[0]
    if (!next) return
    setTimeout(() => {
      const now = performance.now()
      while (this.onLine.length && this.onLine[0].at <= now) /** @type {{ deliver: () => void }} */ (this.onLine.shift()).deliver()
      this.#arrive()
    }, Math.max(0, next.at - performance.now()))
  }

  close () {
    for (const ch of [this, this.peer]) {
      if (ch && ch.readyState === 'open') {
        ch.readyState = 'closed'
        setImmediate(() => ch.dispatchEvent(new Event('close')))
      }
    }
  }
}

/** Two connected channels. */
export function channelPair () {
  const a = new FakeChannel()
  const b = new FakeChannel()
  a.peer = b
  b.peer = a
  return [a, b]
}
