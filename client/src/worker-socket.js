/**
 * The service worker's own coordinator socket (transparent mode). A page's
 * script runs only once the page is partly parsed, and its own socket then
 * takes a handshake and a join before its first lookup can leave (on the demo
 * shop 45–170 ms after the socket was made, on this machine). The worker
 * outlives the page: it opens this socket once the site's pages have said
 * where their coordinators are (`peers`), keeps it while it runs, opens it
 * again at a navigation if it was lost, and joins as a fetch-only peer: it
 * announces nothing, so no lookup ever names it and nobody offers to it. A
 * page whose own socket has not joined yet sends its first lookup (with its
 * offers) and the signals of the channels that lookup started through it
 * (worker-route.js); the coordinator's answers come back to the page that
 * sent them: replies by `ref` (renumbered here, so that pages cannot collide),
 * relayed signals by their connection's `cid` (which the page chose). The
 * coordinator needs no change: a fetch-only peer is an ordinary peer.
 *
 * Only `lookup`, `connect` and `report` go through it; a page's `join`,
 * `update` and `usage` are its own socket's. The worker looks up a page's
 * requests made before the page's script said hello over it (`lookup`, with
 * invitations: worker.js `heldFor`): one round trip where `GET /held` may
 * need a new connection first.
 */
import { CLIENT_ERRORS, PROTOCOL_VERSION, newCid } from '../../protocol/index.js'

/** Frame types a page may send through the worker's socket. */
const RELAYED = new Set(['lookup', 'connect', 'report'])
/** Replies awaited and connections routed, at most (the oldest are forgotten first). */
const KEPT = 1024
/** How long a socket that closed on the worker, or was refused, is not opened again (ms). */
const RETRY_MS = 30000
/** How long a join may take (ms). */
const JOIN_MS = 10000

/**
 * Where the socket connects, and as whom: what the last page that joined said.
 * @typedef {{ urls: string[], visitor?: string, token?: string }} Where
 */

/**
 * Where a frame from the coordinator goes: a page, by its Client.
 * @typedef {{ postMessage: (msg: any) => void }} PageEnd
 */

export class WorkerSocket {
  /** @type {{ toPage: (page: PageEnd, msg: Record<string, unknown>) => void, changed: () => void, WebSocket?: typeof WebSocket }} */
  #o
  /** @type {Where | null} */
  #where = null
  /** @type {WebSocket | null} */
  #ws = null
  /** the URL of the socket open or opening */
  #url = ''
  /** @type {string | null} the fetch-only peer id, once welcomed */
  id = null
  /** @type {RTCConfiguration} the welcome's ICE servers and policy (the pages' offers need them) */
  ice = { iceServers: [] }
  #ref = 0
  #joinRef = 0
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  #joinTimer
  /** @type {Map<number, { page: PageEnd, ref: unknown }>} replies awaited: the page's own ref, by ours */
  #refs = new Map()
  /** @type {Map<string, PageEnd>} the page each connection belongs to, by cid */
  #cids = new Map()
  /** @type {Map<number, (msg: Record<string, any> | null) => void>} the worker's own requests awaiting their replies, by ref */
  #asks = new Map()
  /** when a socket last closed without a welcome, or was refused (Date.now()) */
  #failedAt = -Infinity

  /**
   * @param {object} o
   * @param {(page: PageEnd, msg: Record<string, unknown>) => void} o.toPage send a coordinator frame to a page
   * @param {() => void} o.changed the socket joined, or went (pages are told: `via`)
   * @param {typeof WebSocket} [o.WebSocket] the worker's, by default
   */
  constructor (o) {
    this.#o = o
  }

  /** Whether pages may send through it now. */
  get up () {
    return this.id !== null && this.#ws?.readyState === 1
  }

  /**
   * Where to connect, as a page that joined says (its coordinators, visitor key and join token);
   * null: peers are off (refused, unreachable, opted out), so the socket closes. Opens it now.
   * @param {Where | null} where
   */
  configure (where) {
    this.#where = where
    // Said anew (a fresh token, say): worth a try even if the last one failed.
    this.#failedAt = -Infinity
    if (!where?.urls.length) return this.close()
    // Still connected to one of the coordinators named: kept (a fresh token is used at the next join).
    if (this.#ws && !where.urls.includes(this.#url)) this.close()
    this.open()
  }

  /** Connect and join, unless connected, not configured, or it failed lately. */
  open () {
    const where = this.#where
    if (!where?.urls.length || this.#ws || Date.now() - this.#failedAt < RETRY_MS) return
    const WS = this.#o.WebSocket ?? globalThis.WebSocket
    if (typeof WS !== 'function') return
    const url = this.#url = where.urls[Math.floor(Math.random() * where.urls.length)]
    let ws
    try {
      ws = this.#ws = new WS(url)
    } catch {
      this.#ws = null
      this.#failedAt = Date.now()
      return
    }
    ws.onopen = () => {
      this.#joinRef = ++this.#ref
      ws.send(JSON.stringify({ v: PROTOCOL_VERSION, type: 'join', ref: this.#joinRef, have: [], fetchOnly: true, visitor: where.visitor, token: where.token || undefined }))
      this.#joinTimer = setTimeout(() => ws.close(), JOIN_MS)
    }
    ws.onmessage = (e) => this.#onMessage(String(e.data))
    ws.onclose = () => { if (this.#ws === ws) this.#down() }
  }

  /** Close the socket (pages waiting on it are told at once). */
  close () {
    const ws = this.#ws
    if (!ws) return
    this.#down()
    ws.close()
  }

  /**
   * A page's frame for the coordinator.
   * @param {PageEnd} page
   * @param {Record<string, unknown>} msg
   * @returns {boolean} whether it was sent (not: the socket is not up, or the type is not relayed)
   */
  send (page, msg) {
    if (!this.up || !RELAYED.has(/** @type {string} */ (msg.type))) return false
    /** @type {Record<string, unknown>} */
    const out = { ...msg, v: PROTOCOL_VERSION }
    if (msg.ref !== undefined) {
      const ref = ++this.#ref
      out.ref = ref
      keep(this.#refs, ref, { page, ref: msg.ref })
    }
    // The connections this frame starts or continues: signals for them come back to this page.
    const offers = Array.isArray(msg.offers) ? msg.offers : []
    const signal = /** @type {{ cid?: unknown } | undefined} */ (msg.signal)
    for (const s of [...offers, signal]) if (typeof s?.cid === 'string') keep(this.#cids, s.cid, page)
    this.#ws?.send(JSON.stringify(out))
    return true
  }

  /**
   * Look `hashes` up for a page whose script has not run yet, inviting up to `invites` of the
   * holders named to make offers to this socket's peer for it: each is handed a `connect` signal
   * `{cid, invite: true}` instead of an offer (docs/protocol.md, "Invitations"), and the offers and
   * candidates they send for those `cid`s go to `page`.
   * @param {string[]} hashes
   * @param {number} invites
   * @param {PageEnd} page
   * @param {number} ms how long the answer may take
   * @returns {Promise<Record<string, any> | null>} the `holders` reply; null: the socket is not up (or goes), no answer in time, or an error
   */
  lookup (hashes, invites, page, ms) {
    const offers = Array.from({ length: invites }, () => ({ cid: newCid(), invite: true }))
    if (this.up) for (const { cid } of offers) keep(this.#cids, cid, page)
    return this.#ask({ type: 'lookup', hashes, offers: invites ? offers : undefined }, ms).then((msg) => msg?.type === 'holders' ? msg : null)
  }

  /**
   * A request of the worker's own.
   * @param {Record<string, unknown>} msg
   * @param {number} ms how long the answer may take
   * @returns {Promise<Record<string, any> | null>} its reply; null: the socket is not up (or goes), or no answer in time
   */
  #ask (msg, ms) {
    const ws = this.#ws
    if (!this.up || !ws) return Promise.resolve(null)
    const ref = ++this.#ref
    return new Promise((resolve) => {
      const timer = setTimeout(() => answered(null), ms)
      const answered = (/** @type {Record<string, any> | null} */ reply) => {
        clearTimeout(timer)
        this.#asks.delete(ref)
        resolve(reply)
      }
      this.#asks.set(ref, answered)
      ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...msg, ref }))
    })
  }

  /** @param {string} data */
  #onMessage (data) {
    let msg
    try { msg = JSON.parse(data) } catch { return }
    if (!msg || typeof msg !== 'object') return
    if (msg.ref === this.#joinRef && this.#joinRef) return this.#joined(msg)
    if (msg.type === 'connect') {
      const page = typeof msg.signal?.cid === 'string' ? this.#cids.get(msg.signal.cid) : undefined
      return page && this.#o.toPage(page, msg)
    }
    // Sent away (draining, moved): closed; the next navigation opens another (the page's own socket meanwhile).
    if (msg.type === 'move' || msg.code === 'MGH_ERR_DRAINING') return this.close()
    const asked = this.#asks.get(msg.ref)
    if (asked) return asked(msg)
    const awaited = this.#refs.get(msg.ref)
    if (awaited) {
      this.#refs.delete(msg.ref)
      return this.#o.toPage(awaited.page, { ...msg, ref: awaited.ref })
    }
    // Over the rate limit: any reply still awaited may have been dropped unread (signaling.js).
    if (msg.type === 'error') for (const page of new Set([...this.#refs.values()].map((r) => r.page))) this.#o.toPage(page, msg)
  }

  /** @param {Record<string, any>} msg the join's reply */
  #joined (msg) {
    clearTimeout(this.#joinTimer)
    this.#joinRef = 0
    if (msg.type !== 'welcome' || typeof msg.id !== 'string') {
      this.#failedAt = Date.now()
      return this.close()
    }
    this.id = msg.id
    this.ice = { iceServers: Array.isArray(msg.iceServers) ? msg.iceServers : [], iceTransportPolicy: msg.iceTransportPolicy === 'relay' ? 'relay' : 'all' }
    if (typeof msg.token === 'string' && this.#where) this.#where = { ...this.#where, token: msg.token }
    this.#o.changed()
  }

  /** The socket is gone: what pages await through it fails now, and they are told. */
  #down () {
    clearTimeout(this.#joinTimer)
    if (this.id === null) this.#failedAt = Date.now()
    const waiting = [...this.#refs.values()]
    for (const asked of [...this.#asks.values()]) asked(null)
    this.#ws = null
    this.id = null
    this.#joinRef = 0
    this.#refs.clear()
    this.#cids.clear()
    const { code, message } = CLIENT_ERRORS.MGH_ERR_OFFLINE
    for (const { page, ref } of waiting) this.#o.toPage(page, { type: 'error', code, message, ref })
    this.#o.changed()
  }
}

/**
 * Set a key, forgetting the oldest beyond KEPT (a page that never hears back
 * leaves nothing behind for good).
 * @template K, V
 * @param {Map<K, V>} map
 * @param {K} key
 * @param {V} value
 */
function keep (map, key, value) {
  map.delete(key)
  map.set(key, value)
  if (map.size > KEPT) map.delete(/** @type {K} */ (map.keys().next().value))
}
