/**
 * The page's end of its worker's coordinator socket (worker-socket.js): a
 * route to the coordinator that is up before the page's own socket has
 * joined. The page's first lookup, with its offers, goes this way when it
 * is up, and so do the signals of the channels that lookup starts (the
 * holders it names were introduced to the worker's peer id, not to the
 * page's); everything else goes over the page's own socket (signaling.js).
 * It offers the part of Signaling's interface a lookup and a connection use:
 * `request`, `send`, `ice`, `id`, and the events `connect` and `down` (and
 * `up`: it has joined).
 */
import { Emitter } from './emitter.js'
import { CLIENT_ERRORS, MayghError } from '../../protocol/index.js'

/**
 * @typedef {{ resolve: (reply: any) => void, reject: (err: Error) => void, timer: ReturnType<typeof setTimeout> }} Waiter
 */

export class WorkerRoute extends Emitter {
  /** @type {(msg: import('./worker-messages.js').PageMessage) => void} */
  #post
  /** @type {string | null} the worker's fetch-only peer id while its socket is up */
  id = null
  /** @type {RTCConfiguration} its welcome's ICE servers and policy */
  ice = { iceServers: [] }
  #ref = 0
  /** @type {Map<number, Waiter>} */
  #waiting = new Map()

  /** @param {(msg: import('./worker-messages.js').PageMessage) => void} post to the worker */
  constructor (post) {
    super()
    this.#post = post
  }

  /** Whether frames may go this way now. */
  get joined () {
    return this.id !== null
  }

  /**
   * The worker's word on its socket (`via`): up as `id`, or gone (null), which fails what waits on it.
   * @param {import('./worker-messages.js').Via} m
   */
  via (m) {
    if (typeof m.id === 'string') {
      const was = this.id
      this.id = m.id
      if (m.ice) this.ice = m.ice
      if (was === null) this.emit('up', null)
      return
    }
    if (this.id === null) return
    this.id = null
    for (const [ref, w] of this.#waiting) this.#settle(ref, w, null, new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE, 'the worker\'s coordinator socket closed'))
    this.emit('down', null)
  }

  /**
   * A coordinator frame the worker passed on: a relayed signal, or a reply.
   * @param {any} msg
   */
  frame (msg) {
    if (msg?.type === 'connect' && typeof msg.from === 'string' && msg.signal && typeof msg.signal === 'object') return this.emit('connect', msg)
    const w = this.#waiting.get(msg?.ref)
    if (w) return this.#settle(msg.ref, w, msg.type === 'error' ? null : msg, msg.type === 'error' ? Object.assign(new Error(String(msg.message)), { code: msg.code }) : null)
    // Over the rate limit: what still waits may have been dropped unread.
    if (msg?.type === 'error' && msg.code === 'MGH_ERR_RATE_LIMITED') {
      for (const [ref, v] of this.#waiting) this.#settle(ref, v, null, Object.assign(new Error(String(msg.message)), { code: msg.code }))
    }
  }

  /**
   * @param {number} ref
   * @param {Waiter} w
   * @param {any} reply
   * @param {Error | null} err
   */
  #settle (ref, w, reply, err) {
    this.#waiting.delete(ref)
    clearTimeout(w.timer)
    if (err) w.reject(err)
    else w.resolve(reply)
  }

  /**
   * Send a frame with a `ref`; resolves with its reply, rejects with its error, when the socket
   * goes, or after `timeoutMs`.
   * @param {Record<string, unknown>} msg
   * @param {number} timeoutMs
   * @returns {Promise<any>}
   */
  request (msg, timeoutMs) {
    return new Promise((resolve, reject) => {
      if (!this.joined) return reject(new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE))
      const ref = ++this.#ref
      const timer = setTimeout(() => {
        const w = this.#waiting.get(ref)
        if (w) this.#settle(ref, w, null, new MayghError(CLIENT_ERRORS.MGH_ERR_REQUEST_TIMEOUT, String(msg.type)))
      }, timeoutMs)
      this.#waiting.set(ref, { resolve, reject, timer })
      this.#post({ maygh: 'frame', msg: { ...msg, ref } })
    })
  }

  /**
   * @param {Record<string, unknown>} msg
   * @returns {boolean} whether it was sent
   */
  send (msg) {
    if (!this.joined) return false
    this.#post({ maygh: 'frame', msg })
    return true
  }
}
