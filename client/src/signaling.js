/**
 * The coordinator connection (docs/protocol.md, "Coordinator protocol"): one
 * WebSocket, `join` on every (re)connect with the current holdings, requests
 * matched to replies by `ref`. Emits `joining` (a join is on its way: a
 * lookup may follow it at once), `welcome` (each join), `connect` (signals
 * from peers), `down` (socket lost or left), `warning` (unsolicited errors) and
 * `refused` (the site's coordinators will not serve this page: its origin is
 * not allowed or its join token is bad; the client stops trying) and
 * `unreachable` (every known coordinator has failed us since the last
 * `welcome`: loads stop waiting for one, while reconnecting goes on).
 *
 * Coordinators come and go (a shard dies, drains for a restart, restarts), so
 * the client knows several: the configured URLs plus every `alternates` one
 * it hears. The first connect picks one at random. A lost connection goes to
 * another one: first those the last `welcome`, `move` or MGH_ERR_DRAINING
 * named (live by their registry), then others that have not failed us in the
 * last FAILED_MS; each such new URL is tried after the backoff's first step,
 * and only URLs that failed lately are retried with the growing, capped
 * exponential backoff (with jitter). So a dead shard's clients are elsewhere
 * within a second or so, however many dead URLs they once heard of. A
 * coordinator that sends us away (`move`, MGH_ERR_DRAINING) is left at once
 * for an alternate and skipped for BAR_MS, unless nothing else is known.
 *
 * A request made with `retry` (a lookup: safe to repeat) that is in flight
 * when the socket closes is not failed but sent once more after the next
 * `welcome`, wherever that comes from, still within its first deadline.
 */
import { Emitter } from './emitter.js'
import { CLIENT_ERRORS, LIMITS, MayghError, PROTOCOL_VERSION, backoffDelay } from '../../protocol/index.js'

/** how long a coordinator that sent us away is left out of the rotation */
export const BAR_MS = 60000
/**
 * Other coordinators learn that one drains at their next registry beat (1 s by
 * default), so only an `alternates` list heard this long after we were sent
 * away is taken as word that the sender is back (restarted) and not draining.
 */
export const STALE_MS = 5000
/** how long a coordinator whose socket closed on us (or never opened) is tried only when no other is known */
export const FAILED_MS = 30000
/** coordinator URLs kept at most (a guard against a runaway `alternates`) */
const MAX_URLS = 64
/**
 * Refusals no other coordinator of the site would lift (they share the
 * allow-list and secrets): the page stops using coordinators and loads from the origin.
 */
const REFUSALS = ['MGH_ERR_ORIGIN_NOT_ALLOWED', 'MGH_ERR_TOKEN_MISSING', 'MGH_ERR_TOKEN_INVALID', 'MGH_ERR_TOKEN_EXPIRED', 'MGH_ERR_TOKEN_ORIGIN']

/**
 * A request waiting for its reply; replies are the coordinator's JSON, checked where they are used.
 * `ref` is the one it was last sent with; `retry` whether a lost socket may still send it again.
 * @typedef {{ msg: Record<string, unknown>, ref: number, retry: boolean, resolve: (reply: any) => void, reject: (err: Error) => void, timer: ReturnType<typeof setTimeout> | undefined }} Waiter
 */

/**
 * A coordinator `error` message as a coded Error.
 * @param {{ code: string, message: string }} msg
 */
const coded = (msg) => Object.assign(new Error(msg.message), { code: msg.code })

export class Signaling extends Emitter {
  /** @type {ConstructorParameters<typeof Signaling>[0]} */
  #options
  /** @type {() => number} */
  #random
  /** @type {Map<string, string>} every coordinator URL known, as first given, by its resolved form (so one coordinator is listed once) */
  #urls = new Map()
  /** @type {Map<string, number>} URLs that sent us away → until when (Date.now()) they are skipped */
  #barred = new Map()
  /** @type {Map<string, number>} URLs whose socket closed on us or never opened → when (Date.now()); cleared by their welcome */
  #failedAt = new Map()
  /** @type {Set<string>} the URLs the last `alternates` list named: live by the coordinators' registry then */
  #named = new Set()
  /** URL of the coordinator connected to (or last tried) */
  #url = ''
  /** @type {WebSocket | null} */
  ws = null
  joined = false
  /** @type {string | null} */
  id = null
  /**
   * The socket whose `join` is on its way and not yet answered: a request
   * made `afterJoin` may follow it at once, since a coordinator reads a
   * socket's messages in order, after its join.
   * @type {WebSocket | null}
   */
  joining = null
  /** the coordinator's limits: its defaults until a `welcome` tells the real ones */
  limits = { ...LIMITS }
  #ref = 0
  /** @type {Map<number, Waiter>} replies awaited, by ref */
  waiting = new Map()
  /** @type {Set<Waiter>} retryable requests whose socket closed: sent again after the next `welcome` */
  parked = new Set()
  #attempt = 0
  stopped = false
  /** a refusal stopped us for good */
  #refused = false
  /** @type {Set<string>} coordinators whose socket closed without a welcome since the last one */
  #failed = new Set()
  /** @type {ReturnType<typeof setTimeout> | undefined} the next connect, while one is due */
  #timer

  /**
   * @param {{ urls: string[], token?: string, visitor?: string, backoffBaseMs: number, backoffMaxMs: number, getHave: () => string[], haveKnown?: Promise<unknown>, ice?: RTCConfiguration, random?: () => number, WebSocket?: typeof WebSocket }} options
   *   `urls`: the configured coordinators, as given (relative and http(s) forms are resolved by WebSocket, as always);
   *   `token`: the join token the site gave the page (`data-token`), if it uses them;
   *   `visitor`: the key this browser keeps across visits (what quarantine remembers without tokens);
   *   `haveKnown`: resolves once `getHave` knows the holdings: a socket that opens sooner waits for it
   *   to send its `join` (the socket's handshake is not on the page's way to its first peer byte);
   *   `WebSocket`: the page's, by default
   */
  constructor (options) {
    super()
    this.#options = options
    /** the join token to send: the site's, then the fresh one each `welcome` brings */
    this.token = options.token
    this.#random = options.random ?? Math.random
    /** @type {RTCConfiguration} ICE servers and policy: the last welcome's (or, until one, what a previous page was told: `options.ice`) */
    this.ice = options.ice ?? { iceServers: [] }
    this.learn(options.urls)
  }

  /**
   * Add coordinator URLs. One named as an alternate STALE_MS or more after it
   * sent us away is live and not draining by its peers' account (a rolling
   * restart brought it back), so it is no longer skipped.
   * @param {unknown} list
   * @param {boolean} [alternates] the list a coordinator named: tried first from now on
   */
  learn (list, alternates = false) {
    if (!Array.isArray(list)) return
    if (alternates) this.#named.clear()
    for (const url of list) {
      if (typeof url !== 'string' || !url) continue
      let key = url
      try { key = new URL(url, globalThis.document?.baseURI).href.replace(/^http/, 'ws') } catch {}
      if (!this.#urls.has(key) && this.#urls.size < MAX_URLS) this.#urls.set(key, url)
      const known = this.#urls.get(key) ?? ''
      if (alternates && known) this.#named.add(known)
      if ((this.#barred.get(known) ?? 0) <= Date.now() + BAR_MS - STALE_MS) this.#barred.delete(known)
    }
  }

  /** Whether every known coordinator has closed on us without a welcome since the last one. */
  unreachable () {
    return !this.joined && [...this.#urls.values()].every((u) => this.#failed.has(u))
  }

  /** @param {string} url */
  #isBarred (url) {
    return (this.#barred.get(url) ?? 0) > Date.now()
  }

  /** @param {string} url whether its socket closed on us, or never opened, in the last FAILED_MS */
  failedLately (url) {
    return Date.now() - (this.#failedAt.get(url) ?? -Infinity) < FAILED_MS
  }

  /**
   * Where to go next, among known URLs not barred and other than the current
   * one: at random among those the last `alternates` named that have not
   * failed lately; else among any that have not; else the one that failed
   * longest ago (the current one only if it is the only one). Every one
   * barred (each sent us away: a rolling restart): the one that did so
   * longest ago, which has had the most time to come back, and never the
   * one that just did unless it is the only one.
   */
  #pick () {
    const all = [...this.#urls.values()]
    const open = all.filter((u) => !this.#isBarred(u))
    const others = open.filter((u) => u !== this.#url)
    const fresh = others.filter((u) => !this.failedLately(u))
    const named = fresh.filter((u) => this.#named.has(u))
    const from = named.length ? named : fresh
    if (from.length) return from[Math.floor(this.#random() * from.length)]
    const tried = others.length ? others : open
    if (tried.length) return tried.reduce((a, b) => ((this.#failedAt.get(b) ?? 0) < (this.#failedAt.get(a) ?? 0) ? b : a))
    const rest = all.length > 1 ? all.filter((u) => u !== this.#url) : all
    return rest.reduce((a, b) => ((this.#barred.get(b) ?? 0) < (this.#barred.get(a) ?? 0) ? b : a))
  }

  /** @param {string} [url] */
  start (url = this.#pick()) {
    if (this.stopped) return
    this.#url = url
    let ws
    try {
      ws = this.ws = new (this.#options.WebSocket ?? WebSocket)(url)
    } catch {
      // not a usable URL (WebSocket throws SyntaxError): never again, unless it is all we have
      this.#barred.set(url, Infinity)
      this.#failed.add(url)
      this.#failedAt.set(url, Date.now())
      if (this.unreachable()) this.emit('unreachable', null)
      return this.#retry()
    }
    // `have` is one message, so at most maxAssetsPerMessage; the announcer sends the rest as updates.
    const join = () => this.#join(this.#options.getHave().slice(0, Math.min(this.limits.maxAssetsPerPeer, this.limits.maxAssetsPerMessage)))
    const { haveKnown } = this.#options
    ws.onopen = () => haveKnown ? haveKnown.then(() => { if (this.ws === ws) join() }) : join()
    ws.onmessage = (e) => this.#onMessage(e.data)
    // A draining coordinator closes the sockets it still holds with 1012 and MGH_ERR_DRAINING's message.
    ws.onclose = (e) => { if (this.ws === ws) this.#drop(e.code === 1012 && /drain/i.test(e.reason)) }
  }

  /**
   * The socket is gone, or we leave it: what waits on it fails at once (loads
   * go on to the origin), except retryable requests not yet retried, which
   * wait for the next `welcome` (their timers still run); then reconnect.
   * @param {boolean} [away] the coordinator sent us away: skip it for BAR_MS, go to another now
   */
  #drop (away = false) {
    const ws = this.ws
    if (!this.joined) this.#failed.add(this.#url)
    // Closed on us, joined or not (a dead shard, a cut network): others first for a while.
    if (!away) this.#failedAt.set(this.#url, Date.now())
    this.ws = null
    this.joined = false
    this.joining = null
    for (const w of this.waiting.values()) {
      if (w.retry && !this.stopped) {
        w.retry = false
        this.waiting.delete(w.ref)
        this.parked.add(w)
      } else {
        this.#settle(w, null, new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE, 'coordinator connection lost'))
      }
    }
    this.emit('down', null)
    if (this.unreachable()) this.emit('unreachable', null)
    if (away) this.#barred.set(this.#url, Date.now() + BAR_MS)
    ws?.close()
    this.#retry(away)
  }

  /** @param {boolean} [away] see {@link drop} */
  #retry (away = false) {
    if (this.stopped) return
    clearTimeout(this.#timer)
    const next = this.#pick()
    // Sent away: at once when there is somewhere else to go (the sender is barred by now, so
    // coordinators draining together cannot make this a loop). A URL that has not failed lately:
    // the backoff's first step. One that has: the backoff, growing with each such try.
    const backoff = { baseMs: this.#options.backoffBaseMs, maxMs: this.#options.backoffMaxMs }
    const delay = away && !this.#isBarred(next)
      ? 0
      : backoffDelay(this.failedLately(next) ? this.#attempt++ : 0, backoff, this.#random)
    this.#timer = setTimeout(() => this.start(next), delay)
  }

  /** @param {string[]} have */
  async #join (have) {
    try {
      const sent = this.request({ type: 'join', have, visitor: this.#options.visitor, token: this.token || undefined }, 10000, { beforeJoin: true })
      if (this.ws?.readyState === 1) {
        this.joining = this.ws
        this.emit('joining', null)
      }
      const welcome = await sent
      if (typeof welcome.token === 'string') this.token = welcome.token
      this.id = welcome.id
      // Privacy mode (protocol 4): relay candidates only, through the site's TURN server.
      this.ice = { iceServers: Array.isArray(welcome.iceServers) ? welcome.iceServers : [], iceTransportPolicy: welcome.iceTransportPolicy === 'relay' ? 'relay' : 'all' }
      this.limits = { ...this.limits, ...welcome.limits }
      this.joined = true
      this.joining = null
      this.#attempt = 0
      this.#failed.clear()
      this.#failedAt.delete(this.#url)
      // Requests cut off by the last socket go out again (their deadlines unchanged).
      for (const w of this.parked) {
        this.parked.delete(w)
        this.#dispatch(w)
      }
      this.emit('welcome', { id: this.id, have, url: this.#url })
    } catch (err) {
      this.joining = null
      // Too many assets for this coordinator: offer the most recently used half.
      if (err.code === 'MGH_ERR_TOO_MANY_ASSETS' && have.length > 1) return this.#join(have.slice(0, have.length >> 1))
      if (err.code === 'MGH_ERR_DRAINING') this.#drop(true)
      else if (err.code !== 'MGH_ERR_OFFLINE') this.ws?.close()
    }
  }

  /** @param {string} data */
  #onMessage (data) {
    let msg
    try { msg = JSON.parse(data) } catch { return }
    if (msg?.type === 'connect' && typeof msg.from === 'string' && msg.signal && typeof msg.signal === 'object') {
      return this.emit('connect', msg)
    }
    // `welcome`, `move` and MGH_ERR_DRAINING name the other live coordinators.
    this.learn(msg?.alternates, true)
    if (msg?.type === 'move') return this.#drop(true)
    if (msg?.type === 'error' && REFUSALS.includes(msg.code)) return this.#refuse(msg)
    const w = this.waiting.get(msg?.ref)
    if (w) {
      this.#settle(w, msg.type === 'error' ? null : msg, msg.type === 'error' ? coded(msg) : null)
    } else if (msg?.type === 'error') {
      // Over the rate limit the coordinator drops frames unread and says so
      // once, without a ref: any request still waiting may be one it dropped.
      // Fail them now (a lookup goes on to the origin) rather than at their timeouts.
      if (msg.code === 'MGH_ERR_RATE_LIMITED') for (const v of this.waiting.values()) this.#settle(v, null, coded(msg))
      this.emit('warning', msg)
    }
  }

  /**
   * @param {Waiter} w
   * @param {any} reply
   * @param {Error | null} err
   */
  #settle (w, reply, err) {
    this.waiting.delete(w.ref)
    this.parked.delete(w)
    clearTimeout(w.timer)
    if (err) w.reject(err)
    else w.resolve(reply)
  }

  /**
   * Send a message carrying a fresh `ref`; resolves with the reply, rejects
   * with the `error` reply, on timeout, or when not joined. Settles by
   * `timeoutMs` whatever happens to the connection.
   * @param {Record<string, unknown>} msg
   * @param {number} timeoutMs
   * @param {{ beforeJoin?: boolean, afterJoin?: boolean, retry?: boolean }} [options]
   *   `beforeJoin`: allowed before `welcome` (only `join` is);
   *   `afterJoin`: may follow the `join` on its way at once, not waiting for its `welcome` (pipelined);
   *   `retry`: safe to repeat (a lookup), so if the socket closes before the
   *   reply it is sent once more after the next `welcome`, within `timeoutMs`
   * @returns {Promise<any>}
   */
  request (msg, timeoutMs, { beforeJoin = false, afterJoin = false, retry = false } = {}) {
    return new Promise((resolve, reject) => {
      /** @type {Waiter} */
      const w = { msg, ref: 0, retry, resolve, reject, timer: undefined }
      if (!this.#dispatch(w, beforeJoin || (afterJoin && this.joining !== null && this.joining === this.ws))) return reject(new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE))
      w.timer = setTimeout(() => this.#settle(w, null, new MayghError(CLIENT_ERRORS.MGH_ERR_REQUEST_TIMEOUT, String(msg.type))), timeoutMs)
    })
  }

  /**
   * Send a waiter's message with a fresh `ref` and await its reply.
   * @param {Waiter} w
   * @param {boolean} [beforeJoin]
   * @returns {boolean} whether it was sent
   */
  #dispatch (w, beforeJoin) {
    w.ref = ++this.#ref
    if (!this.send({ ...w.msg, ref: w.ref }, beforeJoin)) return false
    this.waiting.set(w.ref, w)
    return true
  }

  /**
   * @param {Record<string, unknown>} msg
   * @param {boolean} [beforeJoin]
   * @returns {boolean} whether it was sent
   */
  send (msg, beforeJoin = false) {
    if (this.ws?.readyState !== 1 || !(this.joined || beforeJoin)) return false
    this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...msg }))
    return true
  }

  /**
   * This page may not use the site's coordinators: stop, fail what waits, say why.
   * @param {{ code: string, message: string }} msg the refusal
   */
  #refuse (msg) {
    this.#refused = true
    this.stop(coded(msg))
    this.emit('warning', msg)
    this.emit('refused', msg)
  }

  /** Connect now, the first time or again after {@link stop}; no-op while connected or connecting, or once refused. */
  resume () {
    if (this.#refused || (this.ws && !this.stopped)) return
    clearTimeout(this.#timer)
    this.stopped = false
    this.start()
  }

  /**
   * Leave the coordinator (it then lists nothing of ours), until {@link resume}.
   * @param {Error} [err] what requests still waiting fail with (default MGH_ERR_OFFLINE)
   */
  stop (err = new MayghError(CLIENT_ERRORS.MGH_ERR_OFFLINE)) {
    this.stopped = true
    this.joined = false
    this.joining = null
    clearTimeout(this.#timer)
    for (const w of [...this.waiting.values(), ...this.parked]) this.#settle(w, null, err)
    this.ws?.close()
  }
}
