/**
 * The coordinator connection (docs/protocol.md, "Coordinator protocol"): one
 * WebSocket, `join` on every (re)connect with the current holdings, requests
 * matched to replies by `ref`, and reconnects with capped exponential backoff
 * and jitter. Emits `welcome` (each join), `connect` (signals from peers),
 * `down` (socket lost) and `warning` (unsolicited errors).
 */
import { Emitter } from './emitter.js'
import { CLIENT_ERRORS, LIMITS, MayghError, PROTOCOL_VERSION, backoffDelay } from '../../protocol/index.js'

/**
 * A request waiting for its reply; replies are the coordinator's JSON, checked where they are used.
 * @typedef {{ resolve: (reply: any) => void, reject: (err: Error) => void, timer: ReturnType<typeof setTimeout> | undefined }} Waiter
 */

export class Signaling extends Emitter {
  /**
   * @param {{ url: string, backoffBaseMs: number, backoffMaxMs: number, getHave: () => string[] }} options
   */
  constructor (options) {
    super()
    this.options = options
    /** @type {WebSocket | null} */
    this.ws = null
    this.joined = false
    /** @type {string | null} */
    this.id = null
    /** @type {RTCIceServer[]} */
    this.iceServers = []
    /** the coordinator's limits: its defaults until a `welcome` tells the real ones */
    this.limits = { maxMessageBytes: LIMITS.maxMessageBytes, maxAssetsPerPeer: LIMITS.maxAssetsPerPeer, maxAssetsPerMessage: LIMITS.maxAssetsPerMessage }
    this.ref = 0
    /** @type {Map<number, Waiter>} replies awaited, by ref */
    this.waiting = new Map()
    this.attempt = 0
    this.stopped = false
    this.timer = undefined
  }

  start () {
    if (this.stopped) return
    let ws
    try {
      ws = this.ws = new WebSocket(this.options.url)
    } catch {
      return this.retry()
    }
    // `have` is one message, so at most maxAssetsPerMessage; the announcer sends the rest as updates.
    ws.onopen = () => this.join(this.options.getHave().slice(0, Math.min(this.limits.maxAssetsPerPeer, this.limits.maxAssetsPerMessage)))
    ws.onmessage = (e) => this.onMessage(e.data)
    ws.onclose = () => {
      if (this.ws !== ws) return
      this.ws = null
      this.joined = false
      for (const [ref, w] of this.waiting) this.settle(ref, null, new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE, 'coordinator connection lost'), w)
      this.emit('down', null)
      this.retry()
    }
  }

  retry () {
    if (this.stopped) return
    this.timer = setTimeout(() => this.start(), backoffDelay(this.attempt++, { baseMs: this.options.backoffBaseMs, maxMs: this.options.backoffMaxMs }))
  }

  /** @param {string[]} have */
  async join (have) {
    try {
      const welcome = await this.request({ type: 'join', have }, 10000, true)
      this.id = welcome.id
      this.iceServers = Array.isArray(welcome.iceServers) ? welcome.iceServers : []
      this.limits = { ...this.limits, ...welcome.limits }
      this.joined = true
      this.attempt = 0
      this.emit('welcome', { id: this.id, have })
    } catch (err) {
      // Too many assets for this coordinator: offer the most recently used half.
      if (err.code === 'MGH_ERR_TOO_MANY_ASSETS' && have.length > 1) return this.join(have.slice(0, have.length >> 1))
      if (err.code !== 'MGH_ERR_OFFLINE') this.ws?.close()
    }
  }

  /** @param {string} data */
  onMessage (data) {
    let msg
    try { msg = JSON.parse(data) } catch { return }
    if (msg?.type === 'connect' && typeof msg.from === 'string' && msg.signal && typeof msg.signal === 'object') {
      return this.emit('connect', msg)
    }
    const w = this.waiting.get(msg?.ref)
    if (w) {
      if (msg.type === 'error') this.settle(msg.ref, null, Object.assign(new Error(msg.message), { code: msg.code }), w)
      else this.settle(msg.ref, msg, null, w)
    } else if (msg?.type === 'error') {
      this.emit('warning', msg)
    }
  }

  /**
   * @param {number} ref
   * @param {any} reply
   * @param {Error | null} err
   * @param {Waiter} w
   */
  settle (ref, reply, err, w) {
    this.waiting.delete(ref)
    clearTimeout(w.timer)
    if (err) w.reject(err)
    else w.resolve(reply)
  }

  /**
   * Send a message carrying a fresh `ref`; resolves with the reply, rejects
   * with the `error` reply, on timeout, or when not joined.
   * @param {Record<string, unknown>} msg
   * @param {number} timeoutMs
   * @param {boolean} [beforeJoin] allowed before `welcome` (only `join` is)
   * @returns {Promise<any>}
   */
  request (msg, timeoutMs, beforeJoin = false) {
    return new Promise((resolve, reject) => {
      const ref = ++this.ref
      if (!this.send({ ...msg, ref }, beforeJoin)) return reject(new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE))
      /** @type {Waiter} */
      const w = { resolve, reject, timer: undefined }
      w.timer = setTimeout(() => this.settle(ref, null, new MayghError(CLIENT_ERRORS.MGH_ERR_REQUEST_TIMEOUT, String(msg.type)), w), timeoutMs)
      this.waiting.set(ref, w)
    })
  }

  /**
   * @param {Record<string, unknown>} msg
   * @param {boolean} [beforeJoin]
   * @returns {boolean} whether it was sent
   */
  send (msg, beforeJoin = false) {
    if (!this.ws || this.ws.readyState !== 1 || !(this.joined || beforeJoin)) return false
    this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...msg }))
    return true
  }

  stop () {
    this.stopped = true
    clearTimeout(this.timer)
    this.ws?.close()
  }
}
