/**
 * A stand-in for the browser's WebSocket, for Node tests of the coordinator
 * connection without a coordinator: every instance is recorded, and the test
 * plays the coordinator — opens the socket, sends it messages, and ends it
 * with a close code and reason (1006 for one that died). A test that does not
 * drive the client's timers itself awaits `FakeWebSocket.next()` (the next
 * socket made) and `ws.nextSent()` (the next message sent on one).
 */
export class FakeWebSocket {
  /** @type {FakeWebSocket[]} every socket made, oldest first */
  static made = []
  /** @type {((ws: FakeWebSocket) => void)[]} */
  static awaiting = []

  /** @param {string} url */
  constructor (url) {
    this.url = url
    /** 0 connecting, 1 open, 2 closing, 3 closed */
    this.readyState = 0
    /** @type {any[]} what the client sent, parsed */
    this.sent = []
    /** @type {((e: object) => void) | null} */
    this.onopen = null
    /** @type {((e: { data: string }) => void) | null} */
    this.onmessage = null
    /** @type {((e: { code: number, reason: string }) => void) | null} */
    this.onclose = null
    /** @type {((msg: any) => void)[]} */
    this.awaitingSent = []
    FakeWebSocket.made.push(this)
    for (const resolve of FakeWebSocket.awaiting.splice(0)) resolve(this)
  }

  /** @returns {Promise<FakeWebSocket>} the next socket made */
  static next () {
    return new Promise((resolve) => FakeWebSocket.awaiting.push(resolve))
  }

  /** @returns {Promise<any>} the next message the client sends on this socket, parsed */
  nextSent () {
    return new Promise((resolve) => this.awaitingSent.push(resolve))
  }

  /** The newest socket. */
  static get last () {
    return FakeWebSocket.made[FakeWebSocket.made.length - 1]
  }

  /** @param {string} data */
  send (data) {
    if (this.readyState !== 1) throw new Error('InvalidStateError: not open')
    const msg = JSON.parse(data)
    this.sent.push(msg)
    for (const resolve of this.awaitingSent.splice(0)) resolve(msg)
  }

  /** The coordinator accepts the connection. */
  open () {
    this.readyState = 1
    this.onopen?.({})
  }

  /** The coordinator sends `msg`. @param {object} msg */
  receive (msg) {
    this.onmessage?.({ data: JSON.stringify(msg) })
  }

  /** The coordinator's end closes it (or dies: 1006). */
  end (code = 1006, reason = '') {
    if (this.readyState === 3) return
    this.readyState = 3
    this.onclose?.({ code, reason })
  }

  /** The client closes it; as in a browser, the close event comes a moment later. */
  close () {
    if (this.readyState > 1) return
    this.readyState = 2
    queueMicrotask(() => this.end(1005))
  }
}
