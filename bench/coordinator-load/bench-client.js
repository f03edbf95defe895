/**
 * Load-generating clients: {@link LoadClient}, what every one has whatever
 * its server's protocol, and {@link BenchClient}, a plain `ws` WebSocket
 * speaking the coordinator protocol (docs/protocol.md). Its requests carry a
 * `ref` and resolve with the reply that echoes it; an `error` reply rejects
 * with a {@link ReplyError}. Relayed `connect`s from other clients are only
 * counted, and the assets the client holds are kept so that an update can
 * swap one for another.
 */
import { once } from 'node:events'
import WebSocket from 'ws'
import { PROTOCOL_VERSION } from '../../protocol/index.js'

/** What a `connect` carries: the shape of a WebRTC offer, opaque to the coordinator. */
const SIGNAL = Object.freeze({ cid: 'bench', sdp: { type: 'offer', sdp: 'v=0' } })

/** What a relayed ICE candidate looks like (`--workload relay`): the size of a browser's. */
export const RELAY_CANDIDATE = Object.freeze({ candidate: 'candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host generation 0 ufrag abcd network-id 1', sdpMid: '0', sdpMLineIndex: 0 })
/** How long a relayed signal may take to arrive before it counts as lost. */
const RELAY_TIMEOUT_MS = 10_000

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

/**
 * What every load-generating client has, whatever its server's protocol: the
 * socket, the requests awaiting replies, the signals other clients sent it,
 * and the assets it holds. A subclass reads the frames ({@link receive}) and
 * speaks its protocol.
 *
 * @template R the reply a request resolves with
 */
export class LoadClient {
  /**
   * @template {LoadClient<any>} T
   * @this {new (ws: WebSocket) => T}
   * @param {string} url
   * @returns {Promise<T>} once the socket is open
   */
  static async open (url) {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    await once(ws, 'open')
    return new this(ws)
  }

  /**
   * `--workload relay`: the signals on their way, by connection id, across every client of this thread.
   * @type {Map<string, () => void>}
   */
  static waiting = new Map()
  static relays = 0

  /** @param {string | undefined} cid a relayed signal with this id reached its target */
  static arrived (cid) {
    const done = cid === undefined ? undefined : LoadClient.waiting.get(cid)
    if (done === undefined) return
    LoadClient.waiting.delete(/** @type {string} */ (cid))
    done()
  }

  /** @param {WebSocket} ws */
  constructor (ws) {
    this.ws = ws
    /** the id the server knows it by ('' until joined) */
    this.id = ''
    /** @type {LoadClient<any> | null} `--workload relay`: the client it signals */
    this.partner = null
    this.nextRef = 1
    /** @type {Map<number, { type: string, resolve: (reply: R) => void, reject: (err: Error) => void }>} requests awaiting replies, by ref, in the order sent */
    this.pending = new Map()
    /** signals (offers) other clients sent here through the server */
    this.signalsIn = 0
    /** @type {Record<string, number>} errors that answered no request (e.g. the rate limit's, sent for a frame dropped unread), by code */
    this.unmatchedErrors = {}
    /** @type {string[]} assets held */
    this.held = []
    /** @type {Set<string>} the same, for membership tests */
    this.heldSet = new Set()
    ws.on('message', (data) => {
      // A frame this client cannot read (not JSON, not what it expects) is counted, not fatal to the run.
      try {
        this.receive(String(data))
      } catch {
        this.countUnmatched('BENCH_BAD_FRAME')
      }
    })
    ws.on('close', () => {
      for (const { reject } of this.pending.values()) reject(new ReplyError('BENCH_CLOSED', 'the socket closed'))
      this.pending.clear()
    })
    // 'close' follows every 'error'; the requests in flight fail there.
    ws.on('error', () => {})
  }

  /**
   * @param {string} text a frame from the server
   * @abstract
   */
  receive (text) {
    throw new Error(`${this.constructor.name} does not read ${text.length}-character frames`)
  }

  /**
   * @param {string[]} have the assets to join with
   * @returns {Promise<unknown>} once joined
   * @abstract
   */
  join (have) {
    throw new Error(`${this.constructor.name} cannot join with ${have.length} assets`)
  }

  /**
   * One transaction: fetch `add`, then hold it instead of the asset at `index` in {@link held}.
   * @param {string} add an asset not held
   * @param {number} index of the asset to drop
   * @returns {Promise<boolean>} whether a holder was found and sent a signal
   * @abstract
   */
  transaction (add, index) {
    throw new Error(`${this.constructor.name} cannot fetch ${add} for the asset at ${index}`)
  }

  /**
   * One page view on this fresh socket: join holding `have`, find holders of the page's
   * `assets` and signal up to `offers` of them, then hold the page's assets.
   * @param {string[]} have
   * @param {string[]} assets
   * @param {number} offers
   * @returns {Promise<boolean>} whether any holder was found (and sent a signal)
   * @abstract
   */
  page (have, assets, offers) {
    throw new Error(`${this.constructor.name} cannot view a page of ${assets.length} assets with ${have.length} held and ${offers} offers`)
  }

  /**
   * Send one signal with connection id `cid` to `to` through the server (no reply expected).
   * @param {LoadClient<any>} to
   * @param {string} cid
   * @abstract
   */
  signal (to, cid) {
    throw new Error(`${this.constructor.name} cannot signal ${to.id} (${cid})`)
  }

  /**
   * `--workload relay`: one signal to its partner, resolved once the partner has it.
   * @returns {Promise<boolean>} true
   */
  relay () {
    const cid = `r${++LoadClient.relays}`
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        LoadClient.waiting.delete(cid)
        reject(new ReplyError('BENCH_LOST', `signal ${cid} did not arrive`))
      }, RELAY_TIMEOUT_MS)
      LoadClient.waiting.set(cid, () => {
        clearTimeout(timer)
        resolve(true)
      })
      this.signal(/** @type {LoadClient<any>} */ (this.partner), cid)
    })
  }

  /** @param {string} code */
  countUnmatched (code) {
    this.unmatchedErrors[code] = (this.unmatchedErrors[code] ?? 0) + 1
  }

  /**
   * @param {string} type what the request was, for the bench's report of requests left unanswered
   * @param {(ref: number) => string} frame the frame to send, given the request's ref
   * @returns {Promise<R>}
   */
  send (type, frame) {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new ReplyError('BENCH_CLOSED', 'the socket is not open'))
    const ref = this.nextRef++
    return new Promise((resolve, reject) => {
      this.pending.set(ref, { type, resolve, reject })
      this.ws.send(frame(ref))
    })
  }

  /** @param {string[]} have the assets held from now on */
  holdAll (have) {
    this.held = [...have]
    this.heldSet = new Set(have)
  }

  /**
   * @param {string} add now held
   * @param {number} index in {@link held} of the asset it replaces
   */
  hold (add, index) {
    this.heldSet.delete(this.held[index])
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

/** @extends {LoadClient<Reply>} */
export class BenchClient extends LoadClient {
  /** whether a transaction's lookup carries its offer (protocol 3) rather than a `connect` following it */
  static offerInLookup = true

  /** @param {string} text */
  receive (text) {
    /** @type {Reply} */
    const message = JSON.parse(text)
    const waiter = message.ref === undefined ? undefined : this.pending.get(message.ref)
    if (waiter === undefined) {
      if (message.type === 'connect') {
        this.signalsIn++
        LoadClient.arrived(message.signal?.cid)
      } else if (message.type === 'error') this.countUnmatched(message.code)
      return
    }
    this.pending.delete(/** @type {number} */ (message.ref))
    if (message.type === 'error') waiter.reject(new ReplyError(message.code, message.message))
    else waiter.resolve(message)
  }

  /**
   * @param {{ type: string, [field: string]: unknown }} message sent with `v` and a fresh `ref`
   * @param {string} expected the reply type that counts as success
   * @returns {Promise<Reply>}
   */
  request (message, expected) {
    return this.send(message.type, (ref) => JSON.stringify({ v: PROTOCOL_VERSION, ...message, ref })).then((reply) => {
      if (reply.type !== expected) throw new ReplyError('BENCH_UNEXPECTED', `expected ${expected}, got ${reply.type}`)
      return reply
    })
  }

  /**
   * @param {string[]} have
   * @returns {Promise<string>} this client's peer id
   */
  async join (have) {
    const welcome = await this.request({ type: 'join', have }, 'welcome')
    this.holdAll(have)
    this.id = welcome.id
    return welcome.id
  }

  /**
   * `--workload relay`: be introduced to its partner (a lookup of the asset only the partner holds),
   * so that the coordinator relays its signals to it.
   */
  async introduce () {
    await this.request({ type: 'lookup', hash: /** @type {LoadClient<any>} */ (this.partner).held[0] }, 'holders')
  }

  /** @type {LoadClient<any>['signal']} */
  signal (to, cid) {
    // No ref: relayed without an acknowledgement, as trickled ICE candidates are.
    this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, type: 'connect', to: to.id, signal: { cid, candidate: RELAY_CANDIDATE } }))
  }

  /**
   * A page view as the browser client makes it: `join`, one `lookup` of the
   * page's assets carrying `offers` offers (protocol 3: the coordinator hands
   * each to one holder it names), then one `update` announcing what the page fetched.
   * @param {string[]} have
   * @param {string[]} assets
   * @param {number} offers
   */
  async page (have, assets, offers) {
    await this.join(have)
    const signals = Array.from({ length: offers }, (_, i) => ({ ...SIGNAL, cid: `bench${i}` }))
    const { found, offered } = await this.request({ type: 'lookup', hashes: assets, offers: signals }, 'holders')
    const fetched = assets.filter((hash) => !this.heldSet.has(hash))
    if (fetched.length > 0) await this.request({ type: 'update', add: fetched }, 'updated')
    return Object.values(found).some((peers) => peers.length > 0) && Object.keys(offered ?? {}).length > 0
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
    this.hold(add, index)
  }

  /**
   * One transaction: look `add` up, relay a signal to its first holder if
   * there is one (inside the lookup, or with a `connect` after it: see
   * {@link offerInLookup}), then hold `add` instead of the asset at `index` in
   * {@link held}.
   *
   * @param {string} add an asset not held
   * @param {number} index of the asset to drop
   * @returns {Promise<boolean>} whether a holder was found (and the signal relayed to it)
   */
  async transaction (add, index) {
    if (BenchClient.offerInLookup) {
      const { peers, offered } = await this.request({ type: 'lookup', hash: add, offers: [SIGNAL] }, 'holders')
      // A holder named but not handed the offer had left: no success, as a refused connect is none.
      if (peers.length > 0 && Object.keys(offered ?? {}).length === 0) throw new ReplyError('MGH_ERR_UNKNOWN_PEER', peers[0])
      await this.swap(add, index)
      return peers.length > 0
    }
    const { peers } = await this.request({ type: 'lookup', hash: add }, 'holders')
    if (peers.length > 0) await this.request({ type: 'connect', to: peers[0], signal: SIGNAL }, 'relayed')
    await this.swap(add, index)
    return peers.length > 0
  }
}
