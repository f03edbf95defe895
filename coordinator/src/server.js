/**
 * The coordinator: a WebSocket service (protocol in docs/protocol.md) with
 * HTTP endpoints on the same port (http-routes.js), and a STUN server on UDP.
 * Stateless apart from its sockets: the maps live in the store, so any number
 * of coordinators can share one Redis; each is one shard, which beats its
 * entry in the store's registry (presence.js).
 *
 * One request's trail: a frame arrives (#receive), is parsed (message-parser.js,
 * which calls its type's `validate`), waits for the peer's earlier changes
 * (session.js), runs its type's `handle` (handlers/) and is answered (#answer)
 * or refused with a coded error (#replyError). An HTTP request goes to
 * serveHttp and its route (http-routes.js).
 */
import { randomBytes } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { createServer } from 'node:http'
import { WebSocketServer } from 'ws'
import { resolveConfig } from './config.js'
import { ERRORS, MayghError } from '../../protocol/index.js'
import { parseMessage } from './message-parser.js'
import { Deadlines } from './deadlines.js'
import { HANDLERS, lateReply } from './handlers/index.js'
import { Session } from './session.js'
import { ClientLimits } from './client-limits.js'
import { Relay } from './relay.js'
import { Quarantine } from './quarantine.js'
import { Networks } from './networks.js'
import { Heartbeat } from './heartbeat.js'
import { Presence } from './presence.js'
import { Ice } from './ice.js'
import { Metrics } from './metrics.js'
import { UsageTally, siteTotals } from './usage.js'
import { Orphans } from './orphans.js'
import { serveHttp } from './http-routes.js'
import { createLogger, logClientError, repeatedErrors } from './logger.js'
import { PEER_BATCH } from './store/redis-store.js'
import { openStore } from './store/index.js'
import { startStunServer } from './stun/stun-server.js'

/** errors whose reply ends the connection, with the close reason counted */
const CLOSING_ERRORS = new Map(/** @type {[string, import('./metrics.js').CloseReason][]} */ ([
  [ERRORS.MGH_ERR_DRAINING.code, 'draining'],
  [ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED.code, 'origin'],
  ...[ERRORS.MGH_ERR_TOKEN_MISSING, ERRORS.MGH_ERR_TOKEN_INVALID, ERRORS.MGH_ERR_TOKEN_EXPIRED, ERRORS.MGH_ERR_TOKEN_ORIGIN].map(({ code }) => [code, 'token'])
]))

/**
 * Refuse a TCP connection before reading anything from it: a plain HTTP
 * answer with the coded error (what a WebSocket client reports as the
 * upgrade's status), then closed.
 * @param {import('node:net').Socket} socket
 * @param {MayghError} err
 */
function refuseSocket (socket, err) {
  const body = JSON.stringify({ error: { code: err.code, message: err.message } })
  socket.end(`HTTP/1.1 ${err.status} ${err.code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
  socket.destroySoon()
}

/** @typedef {import('./message-parser.js').Message} Message */

/** A request's deadline not started yet: #run starts it if the request's handler has to wait. */
const UNTIMED = -2

/**
 * Start a coordinator.
 *
 * @param {Partial<typeof import('./config.js').DEFAULTS>} [options] see config.js
 * @param {{ store?: import('./store/store.js').Store, now?: () => number, log?: import('./logger.js').Logger }} [deps]
 *   `store`: a store to share (the caller closes it); `now`: the rate limiter's monotonic clock in ms
 *   (tests advance their own); `log`: a pino logger (default: none; the bin passes one at `logLevel`)
 * @returns {Promise<Coordinator>}
 */
export async function startCoordinator (options = {}, deps = {}) {
  const config = resolveConfig(options)
  const ownsStore = deps.store === undefined
  const store = deps.store ?? await openStore(config)
  const coordinator = new Coordinator(config, { store, ownsStore, now: deps.now, log: deps.log })
  try {
    await coordinator.start()
  } catch (err) {
    if (ownsStore) await store.close()
    throw err
  }
  return coordinator
}

/**
 * Emits `warning` (err, context) for every client error and store failure, and
 * logs them (client errors once per connection and code); it never throws for
 * anything a client sends.
 */
export class Coordinator extends EventEmitter {
  /**
   * @param {Readonly<import('./config.js').Config>} config
   * @param {object} deps
   * @param {import('./store/store.js').Store} deps.store an open store
   * @param {boolean} deps.ownsStore whether close() closes it too
   * @param {() => number} [deps.now] each session's rate-limit clock (default: performance.now)
   * @param {import('./logger.js').Logger} [deps.log] where it logs (default: nowhere)
   */
  constructor (config, { store, ownsStore, now, log }) {
    super()
    this.config = config
    this.now = now
    this.log = log ?? createLogger({ level: 'silent' })
    // A random suffix per start: a restarted coordinator, or two started with the
    // same name by mistake, never answer for each other's peers.
    const suffix = randomBytes(6).toString('base64url')
    this.shard = config.shardId === null ? suffix : `${config.shardId}.${suffix}`
    this.ownsStore = ownsStore
    this.store = store
    /** when each request must be answered by (storeTimeoutMs after it arrived): one timer for all */
    this.answerBy = new Deadlines(config.storeTimeoutMs)
    this.networks = new Networks(store)
    /** @type {Map<string, Session>} joined peers on this shard, by id */
    this.sessions = new Map()
    /** @type {Set<Session>} every open connection */
    this.connections = new Set()
    this.counters = { connections: 0, messages: 0, lookups: 0, lookupHits: 0, updates: 0, relayed: 0, forwarded: 0, errors: 0, dropped: 0, busRejected: 0 }
    /** (peer, asset) pairs listed by this shard's peers, checked against maxHoldings */
    this.holdings = 0
    /** joined peers that are service workers' sockets (fetch-only), of `sessions` */
    this.fetchOnly = 0
    /** rate limits kept across a client's sockets, and TCP connections per address */
    this.limits = new ClientLimits(config, now ?? (() => performance.now()))
    this.connectionSeq = 0
    this.metrics = new Metrics({
      shard: this.shard,
      gauges: {
        connections: () => this.connections.size,
        peers: () => this.sessions.size - this.fetchOnly,
        fetchOnlyPeers: () => this.fetchOnly,
        shardsLive: () => this.store.liveShards().size,
        storeUp: () => this.presence?.up === true,
        siteUsage: () => siteTotals(this.store)
      }
    })
    this.url = ''
    /** the URL other shards hand out for this one (`publicUrl`, else `url`) */
    this.publicUrl = ''
    /** set by drain(): no more joins */
    this.draining = false
    this.httpUrl = ''
    this.stunUrl = ''
    this.lastTick = 0
    this.clock = () => (this.lastTick = Math.max(Date.now(), this.lastTick + 1))
    this.warn = (/** @type {Error} */ err, /** @type {string} */ context) => {
      this.log.warn({ err }, context)
      this.emit('warning', err, context)
    }
    /** peers the store failed to remove (or to add, for a join that failed), to remove again */
    this.orphans = new Orphans({ store, warn: this.warn })
  }

  async start () {
    const { config } = this
    this.stun = config.stunPort === -1 ? null : await startStunServer({ port: config.stunPort, host: config.host })
    this.stunUrl = this.stun?.url ?? ''
    this.ice = new Ice(config, this.stunUrl)
    this.quarantine = new Quarantine({
      store: this.store,
      config,
      shard: this.shard,
      sessions: this.sessions,
      metrics: this.metrics,
      warn: this.warn,
      unlist: (session) => this.#unlist(session),
      networks: this.networks
    })
    const quarantine = this.quarantine
    this.usage = new UsageTally({ store: this.store, config, clock: this.clock, metrics: this.metrics, warn: this.warn })
    this.usage.start()
    this.relay = new Relay({ shard: this.shard, store: this.store, sessions: this.sessions, counters: this.counters, onReport: (message) => quarantine.receive(message) })
    await this.relay.start()
    /** @type {import('./handlers/index.js').HandlerContext} what every handler is given besides the message and its session */
    this.context = {
      store: this.store,
      config,
      shard: this.shard,
      sessions: this.sessions,
      ice: this.ice,
      relay: this.relay,
      counters: this.counters,
      metrics: this.metrics,
      clock: this.clock,
      warn: this.warn,
      coordinator: this,
      orphan: (id, assets) => this.orphans.add(id, assets),
      quarantine,
      networks: this.networks,
      usage: this.usage,
      limits: this.limits
    }
    /** @type {import('./http-routes.js').RouteContext} what the HTTP routes read */
    const routeContext = {
      shard: this.shard,
      store: this.store,
      config,
      metrics: this.metrics,
      networks: this.networks,
      counters: this.counters,
      stats: () => this.stats(),
      readiness: () => ({ ready: this.ready(), storeUp: this.presence?.up === true, draining: this.draining }),
      warn: this.warn
    }

    // A connection that has not sent a whole request (a WebSocket upgrade included) within
    // httpTimeoutMs is closed, looked for every second at most (Node's default is every 30 s).
    this.http = createServer({
      headersTimeout: config.httpTimeoutMs,
      requestTimeout: config.httpTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.httpTimeoutMs)
    }, (req, res) => { serveHttp(req, res, routeContext) })
    // Every TCP connection counts against its address's cap, upgraded or not: past it, refused at once.
    this.http.on('connection', (/** @type {import('node:net').Socket} */ socket) => {
      const ip = socket.remoteAddress ?? ''
      socket.once('close', () => this.limits.disconnected(ip))
      if (this.limits.connected(ip)) return
      this.metrics.countError(ERRORS.MGH_ERR_TOO_MANY_CONNECTIONS.code)
      refuseSocket(socket, new MayghError(ERRORS.MGH_ERR_TOO_MANY_CONNECTIONS))
    })
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: config.hardMaxMessageBytes,
      // Refused at the upgrade, before a WebSocket costs anything: past the process's cap (the
      // address's was checked as the connection opened), or from an address whose client was just cut
      // off for flooding (its HTTP endpoints stay open to it).
      verifyClient: (info, done) => {
        const refusal = this.connections.size >= this.config.maxConnections
          ? ERRORS.MGH_ERR_CAPACITY
          : this.limits.barred(info.req.socket.remoteAddress ?? '') ? ERRORS.MGH_ERR_RATE_LIMITED : null
        if (refusal === null) return done(true)
        this.metrics.countError(refusal.code)
        done(false, refusal.status, refusal.code)
      }
    })
    this.wss.on('connection', (ws, req) => this.#accept(ws, req))
    // ws re-emits the HTTP server's errors (listen's EADDRINUSE, …), where unheard they would crash
    // the process; `once(this.http, 'listening')` rejects with them, so start() throws them instead.
    this.wss.on('error', () => {})
    this.http.listen(config.port, config.host)
    await once(this.http, 'listening')
    const { port } = /** @type {import('node:net').AddressInfo} */ (this.http.address())
    const host = config.host.includes(':') ? `[${config.host}]` : config.host
    this.url = `ws://${host}:${port}`
    this.httpUrl = `http://${host}:${port}`

    this.publicUrl = config.publicUrl ?? this.url

    this.presence = new Presence({
      store: this.store,
      shard: this.shard,
      intervalMs: config.shardHeartbeatMs,
      ttlMs: config.shardTtlMs,
      info: () => ({ url: this.publicUrl, draining: this.draining, ...this.#counts() }),
      relist: () => this.#relist(),
      tidy: () => this.orphans.retry(),
      warn: this.warn
    })
    this.presence.on('down', (err) => this.warn(err ?? new Error('store unreachable'), 'store down: lookups answer no holders, changes fail with MGH_ERR_STORE'))
    this.presence.on('up', () => this.log.info({ shard: this.shard }, 'store up'))
    await this.presence.start()
    if (config.allowedOrigins === null && config.tokenSecrets === null) {
      this.log.warn('open coordinator: pages of any site may use it and its STUN server; set ALLOWED_ORIGINS (and TOKEN_SECRETS) to limit it to yours')
    }
    this.log.info({ shard: this.shard, url: this.url, publicUrl: this.publicUrl, health: `${this.httpUrl}/healthz`, stun: this.stunUrl || 'off', store: config.redisUrl === null ? 'memory' : 'redis' }, 'listening')

    this.heartbeat = new Heartbeat({ intervalMs: config.pingIntervalMs, sessions: () => this.connections })
    this.heartbeat.start()
  }

  /**
   * The other live coordinators clients may move to: their public URLs, minus
   * any that are draining (what `welcome`, `move` and MGH_ERR_DRAINING carry).
   * @returns {string[]}
   */
  alternates () {
    const urls = []
    for (const [shard, info] of this.store.liveShards()) {
      if (shard !== this.shard && info.url !== '' && !info.draining) urls.push(info.url)
    }
    return urls
  }

  /**
   * Drain, after HTTP's Alt-Svc: take no more joins (MGH_ERR_DRAINING names the
   * alternates), tell the other shards (so they stop handing this one out as an
   * alternate), and send every client `move` at a moment spread evenly over
   * `windowMs`, so they do not all land on the others at once. Resolves when
   * every client has gone, or `windowMs` plus a grace second has passed; then
   * call close().
   * @param {number} windowMs
   */
  async drain (windowMs) {
    if (this.draining) return
    this.draining = true
    await this.presence?.tick()
    const alternates = this.alternates()
    const open = [...this.connections]
    // Shuffled: which client moves early owes nothing to when it connected.
    for (let i = open.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1))
      ;[open[i], open[j]] = [open[j], open[i]]
    }
    const deadline = Date.now() + windowMs
    const stepMs = 50
    const steps = Math.max(1, Math.ceil(windowMs / stepMs))
    for (let step = 0, sent = 0; step < steps && sent < open.length; step++) {
      const until = Math.ceil(open.length * (step + 1) / steps)
      for (; sent < until; sent++) open[sent].send({ type: 'move', alternates })
      if (sent < open.length) await new Promise((resolve) => setTimeout(resolve, stepMs))
    }
    while (this.connections.size > 0 && Date.now() < deadline + 1000) {
      await new Promise((resolve) => setTimeout(resolve, stepMs))
    }
  }

  /** @returns {{ peers: number, holdings: number }} this shard's joined peers and what they hold */
  #counts () {
    return { peers: this.sessions.size - this.fetchOnly, holdings: this.holdings }
  }

  /**
   * Figures for `/stats`: peers and holdings over every live shard (the others'
   * as of their last beat, this one's now), the live shards, and this shard's counters.
   */
  stats () {
    const shards = this.store.liveShards()
    shards.set(this.shard, { url: this.publicUrl, ...this.#counts() })
    let peers = 0
    let holdings = 0
    for (const info of shards.values()) {
      peers += info.peers
      holdings += info.holdings
    }
    return { shard: this.shard, peers, holdings, shards: shards.size, localPeers: this.sessions.size - this.fetchOnly, localFetchOnly: this.fetchOnly, ...this.counters }
  }

  /** Whether this coordinator should get new clients: registered with a reachable store, and not draining. */
  ready () {
    // Not once a beat or a request found the store quiet, until a beat succeeds again.
    return this.presence?.registered === true && this.presence.up !== false && !this.draining
  }

  /**
   * List every peer of this shard in the store again (after the store lost
   * them), in order with each peer's own changes, a batch of peers at a time.
   */
  async #relist () {
    const sessions = [...this.sessions.values()]
    for (let i = 0; i < sessions.length; i += PEER_BATCH) {
      await Promise.all(sessions.slice(i, i + PEER_BATCH).map((session) => new Promise((resolve) => {
        session.enqueue(async () => {
          const id = session.peerId
          if (id !== null && !session.closed) await this.store.addPeer(id, session.keys(session.assets)).catch((err) => this.warn(err, `listing ${id} again failed`))
          resolve(undefined)
        })
      })))
    }
  }

  /**
   * Take what a peer holds out of the store (it was quarantined), in order
   * with its own changes; what the store may still list is removed when it leaves.
   * @param {Session} session
   * @returns {Promise<void>}
   */
  #unlist (session) {
    return new Promise((resolve) => {
      session.enqueue(async () => {
        const id = session.peerId
        const assets = [...session.assets]
        if (id !== null && !session.closed && assets.length > 0) {
          this.holdings -= assets.length
          session.assets.clear()
          try {
            await this.store.updatePeer(id, [], session.keys(assets))
          } catch (err) {
            const unsure = (session.unsure ??= new Set())
            for (const hash of assets) unsure.add(hash)
            this.warn(/** @type {Error} */ (err), `unlisting quarantined peer ${id} failed; retried when it leaves`)
          }
        }
        resolve()
      })
    })
  }

  /**
   * @param {import('ws').WebSocket} ws
   * @param {import('node:http').IncomingMessage} req the upgrade request
   */
  #accept (ws, req) {
    const session = new Session(ws, this.config, {
      id: ++this.connectionSeq,
      now: this.now,
      onSlowReader: (s) => this.#close(s, ERRORS.MGH_ERR_SLOW_READER, 'slow_reader')
    })
    session.ip = req.socket.remoteAddress ?? ''
    session.origin = req.headers.origin ?? ''
    // A client that comes back carries on with its rate limit where its last socket left it.
    this.limits.resume(session)
    this.connections.add(session)
    this.counters.connections++
    session.joinTimer = setTimeout(() => {
      if (session.peerId === null) this.#close(session, ERRORS.MGH_ERR_JOIN_DEADLINE, 'join_deadline')
    }, this.config.joinDeadlineMs)
    session.joinTimer.unref()
    ws.on('pong', () => { session.heard = true })
    ws.on('message', (data, isBinary) => this.#receive(session, /** @type {Buffer} */ (data), isBinary))
    // ws reports protocol violations (e.g. a frame over hardMaxMessageBytes) here, then closes.
    ws.on('error', (err) => {
      session.closeReason = /** @type {{ code?: string }} */ (err).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'too_large' : 'protocol_error'
      logClientError(this.log, session, session.closeReason, err)
    })
    ws.on('close', () => this.#drop(session))
    // Accepted, then told why and closed: a refused upgrade would tell a page nothing.
    const { allowedOrigins } = this.config
    if (allowedOrigins !== null && !allowedOrigins.includes(session.origin)) {
      this.#replyError(session, new MayghError(ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED, session.origin || 'no Origin header'), undefined)
    }
  }

  /**
   * @param {Session} session
   * @param {Buffer} data
   * @param {boolean} isBinary
   */
  #receive (session, data, isBinary) {
    session.heard = true
    this.counters.messages++
    // A frame over the rate is dropped unread: the first of an episode is
    // answered (no ref: it is not parsed), and a peer that keeps on is cut off.
    if (!session.takeToken()) return this.#refuse(session)
    let message
    try {
      message = parseMessage(data, isBinary, this.config)
    } catch (err) {
      this.metrics.countMessage('other')
      this.#replyError(session, err, err.ref)
      return
    }
    this.metrics.countMessage(message.type)
    // Every request is answered within storeTimeoutMs of its arrival, whatever the store does and
    // whatever this peer's earlier changes still wait for: a lookup with no holders, anything else
    // MGH_ERR_STORE. What its handler does later is not sent.
    // A request that waits behind this peer's earlier changes is timed from now; one that runs now
    // is timed only if its handler has to wait (#run): none is, on the in-process store.
    const late = session.pending === 0 ? UNTIMED : this.#deadline(session, message)
    if (HANDLERS[message.type].ordered) session.enqueue(() => this.#run(session, /** @type {Message} */ (message), late))
    else session.after(() => { this.#run(session, /** @type {Message} */ (message), late) })
  }

  /**
   * @param {Session} session
   * @param {Message} message
   * @returns {number} its answer deadline, from now (-1: none, it has no ref)
   */
  #deadline (session, message) {
    return message.ref === undefined ? -1 : this.answerBy.start(() => this.#late(session, message))
  }

  /**
   * Handle one request and answer it. A handler that finishes at once (a relay
   * to a peer on this shard) is answered at once: no promise on that path.
   * @param {Session} session
   * @param {Message} message
   * @param {number} late its answer deadline (-1: none, it has no ref; UNTIMED: started here if the handler waits)
   * @returns {Promise<void> | void}
   */
  #run (session, message, late) {
    if (session.closed) {
      this.answerBy.settle(late)
      return
    }
    // Answered now, a request never started has no deadline to settle.
    const now = late === UNTIMED ? -1 : late
    let out
    try {
      out = HANDLERS[message.type].handle(message, session, /** @type {import('./handlers/index.js').HandlerContext} */ (this.context))
    } catch (err) {
      return this.#failed(session, message, now, err)
    }
    if (!(out instanceof Promise)) return this.#answer(session, message, now, out)
    const deadline = late === UNTIMED ? this.#deadline(session, message) : late
    return out.then((reply) => this.#answer(session, message, deadline, reply), (err) => this.#failed(session, message, deadline, err))
  }

  /**
   * @param {Session} session
   * @param {Message} message
   * @param {number} late
   * @param {object | undefined} reply the handler's (a fresh object, without `ref`)
   * @returns {Promise<void> | void}
   */
  #answer (session, message, late, reply) {
    // Past its deadline it has been answered already (#late).
    if (this.answerBy.settle(late) && reply !== undefined) {
      // The ref goes on the reply rather than on a copy.
      if (message.ref !== undefined) /** @type {Record<string, unknown>} */ (reply).ref = message.ref
      try {
        session.send(reply)
      } catch (err) {
        // Nothing here may throw: the session's queue goes on after it.
        this.warn(/** @type {Error} */ (err), `answering ${message.type} failed`)
      }
    }
    // A join that finished after its socket closed: the close handler saw no peer; remove it here.
    if (session.closed && message.type === 'join') return this.#removePeer(session)
  }

  /**
   * @param {Session} session
   * @param {Message} message
   * @param {number} late
   * @param {unknown} err what the handler threw or rejected with
   */
  #failed (session, message, late, err) {
    if (this.answerBy.settle(late)) this.#replyError(session, err, message.ref)
  }

  /**
   * A request not answered within storeTimeoutMs: what it answers now (handlers/index.js lateReply).
   * @param {Session} session
   * @param {Message} message
   */
  #late (session, message) {
    this.presence?.quiet()
    const reply = lateReply(message)
    if (reply === null) this.#replyError(session, new MayghError(ERRORS.MGH_ERR_STORE, 'the store did not answer in time'), message.ref)
    else session.send({ ...reply, ref: message.ref })
  }

  /**
   * A frame the rate limit refused.
   * @param {Session} session
   */
  #refuse (session) {
    this.counters.dropped++
    this.metrics.countDropped()
    const drops = session.drop()
    if (drops === 1) this.#replyError(session, new MayghError(ERRORS.MGH_ERR_RATE_LIMITED), undefined)
    // `>=`: a client that reconnects carries its episode on, and is closed at its next dropped frame.
    else if (drops >= this.config.rateLimitCloseAfter) this.#close(session, ERRORS.MGH_ERR_RATE_LIMITED, 'rate_limited')
  }

  /**
   * Close a socket for a coded reason (its close code and message).
   * @param {Session} session
   * @param {import('../../protocol/errors.js').ErrorSpec} spec
   * @param {import('./metrics.js').CloseReason} reason
   */
  #close (session, spec, reason) {
    if (session.closed) return
    session.closeReason = reason
    this.metrics.countError(spec.code)
    logClientError(this.log, session, spec.code)
    // A reader too slow for its buffer would not read a close frame either.
    if (reason === 'slow_reader') session.ws.terminate()
    else session.ws.close(spec.close, spec.message)
  }

  /**
   * Reply with a coded error; anything that is not a MayghError is a store
   * failure as far as the client is concerned.
   *
   * @param {Session} session
   * @param {unknown} err
   * @param {number | undefined} ref
   */
  #replyError (session, err, ref) {
    this.counters.errors++
    const error = err instanceof MayghError ? err : new MayghError(ERRORS.MGH_ERR_STORE)
    this.metrics.countError(error.code)
    logClientError(this.log, session, error.code, err)
    this.emit('warning', err, `replied ${error.code}`)
    const draining = error.code === ERRORS.MGH_ERR_DRAINING.code
    session.send({ type: 'error', code: error.code, message: error.message, ...(draining ? { alternates: this.alternates() } : {}), ...(ref === undefined ? {} : { ref }) })
    const closing = CLOSING_ERRORS.get(error.code)
    if (closing !== undefined) this.#close(session, ERRORS[/** @type {keyof typeof ERRORS} */ (error.code)], closing)
  }

  /**
   * @param {Session} session
   */
  #drop (session) {
    session.closed = true
    clearTimeout(session.joinTimer)
    this.connections.delete(session)
    this.limits.left(session)
    this.metrics.countClose(session.closeReason)
    this.log.debug({ conn: session.id, peer: session.peerId ?? undefined, reason: session.closeReason, repeats: repeatedErrors(session) }, 'closed')
    session.enqueue(() => this.#removePeer(session))
  }

  /**
   * A peer that has left (or whose join finished after its socket closed): off
   * this shard, and out of the store, retried while the store fails (orphans.js).
   * @param {Session} session
   */
  async #removePeer (session) {
    const id = session.peerId
    if (id === null) return
    session.peerId = null
    if (this.sessions.get(id) === session) this.sessions.delete(id)
    if (session.fetchOnly) this.fetchOnly--
    this.holdings -= session.assets.size
    await this.orphans.remove(id, session.keys([...session.assets, ...(session.unsure ?? [])]))
  }

  /**
   * Stop: close every socket (1012, so clients reconnect elsewhere), take this
   * shard's peers out of the store, stop STUN, and close the store if it is ours.
   */
  async close () {
    this.heartbeat?.stop()
    const { close, message } = new MayghError(this.draining ? ERRORS.MGH_ERR_DRAINING : ERRORS.MGH_ERR_SHUTTING_DOWN)
    const open = [...this.connections]
    for (const session of open) {
      session.closeReason = this.draining ? 'draining' : 'shutdown'
      session.ws.close(/** @type {number} */ (close), message)
    }
    // A client that does not answer the close frame within a second is cut off.
    const cutoff = setTimeout(() => { for (const s of open) s.ws.terminate() }, 1000)
    await Promise.all(open.map((s) => s.ws.readyState === s.ws.CLOSED ? null : once(s.ws, 'close')))
    clearTimeout(cutoff)
    await Promise.all(open.map((s) => s.queue))
    await this.usage?.stop()
    await this.presence?.stop()
    await this.relay?.stop()
    await new Promise((resolve) => this.wss ? this.wss.close(() => resolve(undefined)) : resolve(undefined))
    if (this.http?.listening) await new Promise((resolve) => this.http?.close(resolve))
    await this.stun?.close()
    if (this.ownsStore) await this.store.close()
    this.answerBy.clear()
  }
}
