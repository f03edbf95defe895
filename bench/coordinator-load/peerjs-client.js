/**
 * One load-generating client for `--server peerjs` (`--workload relay`): a
 * plain `ws` WebSocket speaking PeerJS's server protocol. It connects as
 * `/peerjs?key=peerjs&id=…&token=…`, is told `OPEN`, and relays a signal to
 * its partner as `{type: 'CANDIDATE', dst, payload}`, which the server hands
 * on as `{type, src, dst, payload}`; no acknowledgement comes back. PeerJS
 * keeps no map of who holds what: a client's holdings are only its own
 * (join sends nothing).
 */
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { LoadClient, RELAY_CANDIDATE, ReplyError } from './bench-client.js'

/** @extends {LoadClient<never>} */
export class PeerjsBenchClient extends LoadClient {
  /**
   * @template {LoadClient<any>} T
   * @this {new (ws: WebSocket) => T}
   * @param {string} url the server's base WebSocket URL
   * @returns {Promise<T>} once the server said OPEN
   */
  static async open (url) {
    const id = randomBytes(12).toString('base64url')
    const ws = new WebSocket(`${url}/peerjs?key=peerjs&id=${id}&token=${randomBytes(6).toString('hex')}`, { perMessageDeflate: false })
    const client = /** @type {T & PeerjsBenchClient} */ (new this(ws))
    client.id = id
    await Promise.race([client.opened, once(ws, 'close').then(() => { throw new ReplyError('BENCH_CLOSED', 'closed before OPEN') })])
    return client
  }

  /** @param {WebSocket} ws */
  constructor (ws) {
    super(ws)
    /** @type {() => void} */
    let open = () => {}
    this.opened = new Promise((resolve) => { open = () => resolve(undefined) })
    this.open = open
  }

  /** @param {string} text */
  receive (text) {
    const message = JSON.parse(text)
    if (message.type === 'OPEN') return this.open()
    if (message.type === 'CANDIDATE') {
      this.signalsIn++
      return LoadClient.arrived(message.payload?.connectionId)
    }
    this.countUnmatched(`PEERJS_${message.type}`)
  }

  /** @param {string[]} have */
  async join (have) {
    this.holdAll(have)
  }

  /** @type {LoadClient<never>['signal']} */
  signal (to, cid) {
    this.ws.send(JSON.stringify({ type: 'CANDIDATE', dst: to.id, payload: { candidate: RELAY_CANDIDATE, type: 'data', connectionId: cid } }))
  }
}
