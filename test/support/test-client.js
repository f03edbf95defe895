/**
 * A minimal protocol client for tests: sends messages, matches replies by
 * `ref`, and queues unsolicited messages (relayed `connect`s).
 */
import { once } from 'node:events'
import WebSocket from 'ws'
import { PROTOCOL_VERSION } from '../../protocol/index.js'

export class TestClient {
  /**
   * @param {string} url
   * @param {import('ws').ClientOptions} [options]
   * @returns {Promise<TestClient>}
   */
  static async open (url, options) {
    const ws = new WebSocket(url, options)
    await once(ws, 'open')
    return new TestClient(ws)
  }

  /** @param {WebSocket} ws */
  constructor (ws) {
    this.ws = ws
    this.nextRef = 1
    /** @type {Map<number, (message: any) => void>} */
    this.pending = new Map()
    /** @type {any[]} */
    this.inbox = []
    /** @type {((message: any) => void)[]} */
    this.waiters = []
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString())
      const resolve = message.ref === undefined ? undefined : this.pending.get(message.ref)
      if (resolve) {
        this.pending.delete(message.ref)
        resolve(message)
      } else if (this.waiters.length > 0) {
        /** @type {(message: any) => void} */ (this.waiters.shift())(message)
      } else {
        this.inbox.push(message)
      }
    })
  }

  /**
   * Send a message with a fresh `ref` and resolve with the reply to it.
   * @param {object} message
   * @returns {Promise<any>}
   */
  request (message) {
    const ref = this.nextRef++
    return new Promise((resolve) => {
      this.pending.set(ref, resolve)
      this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...message, ref }))
    })
  }

  /** @param {string | Buffer} raw sent exactly as given */
  sendRaw (raw) {
    this.ws.send(raw)
  }

  /** @returns {Promise<any>} the next message that is not a reply to a request */
  next () {
    if (this.inbox.length > 0) return Promise.resolve(this.inbox.shift())
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** @param {string[]} [have] @returns {Promise<any>} the welcome */
  join (have = []) {
    return this.request({ type: 'join', have })
  }

  async close () {
    if (this.ws.readyState === WebSocket.CLOSED) return
    this.ws.close()
    await once(this.ws, 'close')
  }
}
