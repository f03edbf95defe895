/**
 * One load-generating client: a plain `ws` WebSocket speaking the coordinator
 * protocol (docs/protocol.md). Requests carry a `ref` and resolve with the
 * reply that echoes it; an `error` reply rejects with a {@link ReplyError}.
 * Relayed `connect`s from other clients are only counted, and the assets the
 * client holds are kept here so that an update can swap one for another.
 */
import { once } from 'node:events'
import WebSocket from 'ws'
import { PROTOCOL_VERSION } from '../../protocol/index.js'

/** An `error` reply, a socket that closed mid-request, or a reply of the wrong type. */
export class ReplyError extends Error {
  /**
   * @param {string} code the protocol's error code, or BENCH_CLOSED / BENCH_UNEXPECTED
   * @param {string} message
   */
  constructor (code, message) {
    super(`${code}: ${message}`)
    this.code = code
  }
}

/** @typedef {{ type: string, ref?: number, [field: string]: any }} Reply */

export class BenchClient {
  /**
   * @param {string} url
   * @returns {Promise<BenchClient>} once the socket is open
   */
  static async open (url) {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    await once(ws, 'open')
    return new BenchClient(ws)
  }

  /** @param {WebSocket} ws */
  constructor (ws) {
    this.ws = ws
    this.nextRef = 1
    /** @type {Map<number, { type: string, resolve: (reply: Reply) => void, reject: (err: Error) => void }>} requests awaiting replies, by ref */
    this.pending = new Map()
    /** relayed `connect`s received from other clients */
    this.signalsIn = 0
    /** @type {Record<string, number>} `error`s that name no request (e.g. the rate limit's, sent for a frame dropped unread), by code */
    this.unmatchedErrors = {}
    /** @type {string[]} assets held, as the coordinator lists them */
    this.held = []
    /** @type {Set<string>} the same, for membership tests */
    this.heldSet = new Set()
    ws.on('message', (data) => this.#receive(String(data)))
    ws.on('close', () => this.#failPending(new ReplyError('BENCH_CLOSED', 'the socket closed')))
    // 'close' follows every 'error'; the requests in flight fail there.
    ws.on('error', () => {})
  }

  /** @param {string} text */
  #receive (text) {
    /** @type {Reply} */
    const message = JSON.parse(text)
    const waiter = message.ref === undefined ? undefined : this.pending.get(message.ref)
    if (waiter === undefined) {
      if (message.type === 'connect') this.signalsIn++
      else if (message.type === 'error') this.unmatchedErrors[message.code] = (this.unmatchedErrors[message.code] ?? 0) + 1
      return
    }
    this.pending.delete(/** @type {number} */ (message.ref))
    if (message.type === 'error') waiter.reject(new ReplyError(message.code, message.message))
    else waiter.resolve(message)
  }

  /** @param {Error} err */
  #failPending (err) {
    for (const { reject } of this.pending.values()) reject(err)
    this.pending.clear()
  }

  /**
   * @param {{ type: string, [field: string]: unknown }} message sent with `v` and a fresh `ref`
   * @param {string} expected the reply type that counts as success
   * @returns {Promise<Reply>}
   */
  request (message, expected) {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new ReplyError('BENCH_CLOSED', 'the socket is not open'))
    const ref = this.nextRef++
    return new Promise((resolve, reject) => {
      this.pending.set(ref, {
        type: message.type,
        resolve: (reply) => reply.type === expected ? resolve(reply) : reject(new ReplyError('BENCH_UNEXPECTED', `expected ${expected}, got ${reply.type}`)),
        reject
      })
      this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...message, ref }))
    })
  }

  /**
   * @param {string[]} have
   * @returns {Promise<string>} this client's peer id
   */
  async join (have) {
    const welcome = await this.request({ type: 'join', have }, 'welcome')
    this.held = [...have]
    this.heldSet = new Set(have)
    return welcome.id
  }

  /**
   * Tell the coordinator this client now holds `add` instead of the asset at
   * `index` in {@link held}; the count stays the same.
   *
   * @param {string} add an asset not held
   * @param {number} index of the asset to drop
   */
  async swap (add, index) {
    const remove = this.held[index]
    await this.request({ type: 'update', add: [add], remove: [remove] }, 'updated')
    this.heldSet.delete(remove)
    this.heldSet.add(add)
    this.held[index] = add
  }

  async close () {
    if (this.ws.readyState === WebSocket.CLOSED) return
    const closed = once(this.ws, 'close')
    this.ws.close()
    await closed
  }
}
