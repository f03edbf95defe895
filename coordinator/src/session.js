/**
 * One client connection: its socket, the peer it joined as, what that peer
 * holds, and the serial queue its messages are handled in. Handling one
 * message at a time per peer keeps its updates, lookups and removal ordered
 * without locks; different peers proceed concurrently.
 */
import { MayghError } from './errors.js'

export class Session {
  /**
   * @param {import('ws').WebSocket} ws
   * @param {{ rateLimitPerSecond: number, rateLimitBurst: number }} limits
   */
  constructor (ws, { rateLimitPerSecond, rateLimitBurst }) {
    this.ws = ws
    /** @type {string | null} set by `join` */
    this.peerId = null
    /** @type {Set<string>} hashes the peer holds, as the store lists them */
    this.assets = new Set()
    this.closed = false
    /** answered the last ping (or sent something) */
    this.alive = true
    /** @type {Promise<void>} tail of this peer's message queue */
    this.queue = Promise.resolve()
    this.rate = rateLimitPerSecond
    this.burst = rateLimitBurst
    this.tokens = rateLimitBurst
    this.refilledAt = performance.now()
  }

  /**
   * @returns {this & { peerId: string }} this session, once it has joined
   * @throws {MayghError} MGH_ERR_NOT_JOINED
   */
  requirePeer () {
    if (this.peerId === null) throw new MayghError('MGH_ERR_NOT_JOINED')
    return /** @type {any} */ (this)
  }

  /**
   * Token bucket: false when the peer has sent more than its rate allows.
   * @returns {boolean}
   */
  takeToken () {
    const now = performance.now()
    this.tokens = Math.min(this.burst, this.tokens + (now - this.refilledAt) * this.rate / 1000)
    this.refilledAt = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  /**
   * Run `task` after every earlier queued task of this session.
   * @param {() => Promise<void>} task must not reject
   */
  enqueue (task) {
    this.queue = this.queue.then(task)
  }

  /** @param {object} message */
  send (message) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message))
  }
}
