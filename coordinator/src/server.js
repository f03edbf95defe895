/**
 * The coordinator: a WebSocket service (protocol in docs/protocol.md) with
 * `/healthz`, `/readyz` and `/stats` over HTTP on the same port, and a STUN
 * server on UDP. Stateless apart from its sockets: the maps live in the store,
 * so any number of coordinators can share one Redis; each is one shard, which
 * beats its entry in the store's registry (presence.js).
 */
import { randomBytes } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { createServer } from 'node:http'
import { WebSocketServer } from 'ws'
import { resolveConfig } from './config.js'
import { ERRORS, LIMITS, MayghError, isSri } from '../../protocol/index.js'
import { parseMessage } from './message-parser.js'
import { Deadlines } from './deadlines.js'
import { HANDLERS, ORDERED_TYPES, lateReply } from './handlers/index.js'
import { Session } from './session.js'
import { ClientLimits } from './client-limits.js'
import { Relay } from './relay.js'
import { Quarantine } from './quarantine.js'
import { Networks } from './networks.js'
import { Heartbeat } from './heartbeat.js'
import { Presence } from './presence.js'
import { Ice } from './ice.js'
import { Metrics } from './metrics.js'
import { UsageTally } from './usage.js'
import { USAGE_MINUTE_MS, noUsage } from './store/store.js'
import { renderDashboard } from './dashboard-page.js'
import { loadChartJs } from '../../common/chart-js.js'
import { createLogger, logClientError, repeatedErrors } from './logger.js'
import { PEER_BATCH } from './store/redis-store.js'

/** errors whose reply ends the connection, with the close reason counted */
const CLOSING_ERRORS = new Map(/** @type {[string, import('./metrics.js').CloseReason][]} */ ([
  [ERRORS.MGH_ERR_DRAINING.code, 'draining'],
  [ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED.code, 'origin'],
  ...[ERRORS.MGH_ERR_TOKEN_MISSING, ERRORS.MGH_ERR_TOKEN_INVALID, ERRORS.MGH_ERR_TOKEN_EXPIRED, ERRORS.MGH_ERR_TOKEN_ORIGIN].map(({ code }) => [code, 'token'])
]))

/** removals kept to retry while the store is down; past this, a gone peer may stay listed until its shard restarts */
const MAX_ORPHANS = 100_000
/** `/usage`: how far back a dashboard may ask (31 days), and the assets it names */
const USAGE_MAX_MINUTES = 44_640
const USAGE_TOP_ASSETS = 10
const DASHBOARD = renderDashboard()
/** @type {Promise<string> | undefined} Chart.js, read once for every coordinator of the process */
let chartJs

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

/**
 * @param {import('./store/store.js').UsageCounts} counts
 * @returns {number} the share of asset bytes fetched over the network that came from peers (0 when none)
 */
const peerShare = (counts) => counts.peer + counts.origin > 0 ? Math.round(counts.peer / (counts.peer + counts.origin) * 10000) / 10000 : 0
import { openStore } from './store/index.js'

/** @typedef {import('./message-parser.js').Message} Message */
import { startStunServer } from './stun/stun-server.js'

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
    /** rate limits kept across a client's sockets, and TCP connections per address */
    this.limits = new ClientLimits(config, now ?? (() => performance.now()))
    this.connectionSeq = 0
    this.metrics = new Metrics({
      shard: this.shard,
      gauges: {
        connections: () => this.connections.size,
        peers: () => this.sessions.size,
        shardsLive: () => this.store.liveShards().size,
        storeUp: () => this.presence?.up === true,
        siteUsage: () => this.#siteTotals()
      }
    })
    this.url = ''
    /** the URL other shards hand out for this one (`publicUrl`, else `url`) */
    this.publicUrl = ''
    /** set by drain(): no more joins */
    this.draining = false
    /** @type {Map<string, readonly string[]>} peers the store failed to remove (or to add, for a join that failed), to remove again */
    this.orphans = new Map()
    this.httpUrl = ''
    this.stunUrl = ''
    this.lastTick = 0
    this.clock = () => (this.lastTick = Math.max(Date.now(), this.lastTick + 1))
    this.warn = (/** @type {Error} */ err, /** @type {string} */ context) => {
      this.log.warn({ err }, context)
      this.emit('warning', err, context)
    }
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
      orphan: (id, assets) => this.#orphan(id, assets),
      quarantine,
      networks: this.networks,
      usage: this.usage,
      limits: this.limits
    }

    // A connection that has not sent a whole request (a WebSocket upgrade included) within
    // httpTimeoutMs is closed, looked for every second at most (Node's default is every 30 s).
    this.http = createServer({
      headersTimeout: config.httpTimeoutMs,
      requestTimeout: config.httpTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.httpTimeoutMs)
    }, (req, res) => { this.#serveHttp(req, res) })
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
      tidy: () => this.#retryOrphans(),
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
    return { peers: this.sessions.size, holdings: this.holdings }
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
    return { shard: this.shard, peers, holdings, shards: shards.size, localPeers: this.sessions.size, ...this.counters }
  }

  /**
   * Every site's usage totals and the share of their asset bytes visitors served (`/stats`'s `usage`).
   * @returns {Promise<Record<string, import('./store/store.js').UsageCounts & { peerShare: number }>>}
   */
  async #usageTotals () {
    return Object.fromEntries((await this.#siteTotals()).map(([site, total]) => [site, { ...total, peerShare: peerShare(total) }]))
  }

  /**
   * Every site's usage totals, from the store.
   * @returns {Promise<[string, import('./store/store.js').UsageCounts][]>}
   */
  async #siteTotals () {
    const sites = await this.store.usageSites()
    return Promise.all(sites.map(async (site) => /** @type {[string, import('./store/store.js').UsageCounts]} */ ([site, (await this.store.siteUsage(site, Date.now(), 0)).total])))
  }

  /**
   * What the dashboard shows (`/usage`): one site's totals, its last `minutes`, its top
   * assets, the sites there are and the peers online. No site named: the first there is.
   * @param {string | null} site
   * @param {number} minutes
   */
  async #usage (site, minutes) {
    const sites = (await this.store.usageSites()).sort()
    const chosen = site ?? sites[0] ?? null
    const usage = chosen === null ? null : await this.store.siteUsage(chosen, Date.now() - minutes * USAGE_MINUTE_MS, USAGE_TOP_ASSETS)
    return {
      site: chosen,
      sites,
      peers: this.stats().peers,
      total: usage?.total ?? noUsage(),
      peerShare: peerShare(usage?.total ?? noUsage()),
      minutes: usage?.minutes ?? [],
      assets: usage?.assets ?? []
    }
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
          await this.store.updatePeer(id, [], session.keys(assets)).catch((err) => {
            const unsure = (session.unsure ??= new Set())
            for (const hash of assets) unsure.add(hash)
            this.warn(err, `unlisting quarantined peer ${id} failed; retried when it leaves`)
          })
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
    const late = message.ref === undefined ? -1 : this.answerBy.start(() => this.#late(session, /** @type {Message} */ (message)))
    if (ORDERED_TYPES.has(message.type)) session.enqueue(async () => this.#run(session, /** @type {Message} */ (message), late))
    else session.after(() => { this.#run(session, /** @type {Message} */ (message), late) })
  }

  /**
   * Handle one request and answer it. A handler that finishes at once (a relay
   * to a peer on this shard) is answered at once: no promise on that path.
   * @param {Session} session
   * @param {Message} message
   * @param {number} late its answer deadline (-1: none, it has no ref)
   * @returns {Promise<void> | void}
   */
  #run (session, message, late) {
    if (session.closed) {
      this.answerBy.settle(late)
      return
    }
    let out
    try {
      out = HANDLERS[message.type].handle(message, session, /** @type {import('./handlers/index.js').HandlerContext} */ (this.context))
    } catch (err) {
      return this.#failed(session, message, late, err)
    }
    if (out instanceof Promise) return out.then((reply) => this.#answer(session, message, late, reply), (err) => this.#failed(session, message, late, err))
    return this.#answer(session, message, late, out)
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
   * @param {Session} session
   */
  async #removePeer (session) {
    const id = session.peerId
    if (id === null) return
    session.peerId = null
    if (this.sessions.get(id) === session) this.sessions.delete(id)
    this.holdings -= session.assets.size
    await this.#forget(id, session.keys([...session.assets, ...(session.unsure ?? [])]))
  }

  /**
   * Take a peer out of the store; when the store fails, keep it to retry
   * after the next beat that succeeds, so no gone peer stays listed.
   * @param {string} id
   * @param {readonly string[]} assets
   */
  async #forget (id, assets) {
    try {
      await this.store.removePeer(id, assets)
      this.orphans.delete(id)
    } catch (err) {
      this.warn(/** @type {Error} */ (err), `removing peer ${id} failed; retried after the next beat`)
      this.#orphan(id, assets)
    }
  }

  /**
   * A peer the store may list though no session has it: removed after the next beat that succeeds.
   * @param {string} id
   * @param {readonly string[]} assets
   */
  #orphan (id, assets) {
    if (this.orphans.size < MAX_ORPHANS) this.orphans.set(id, assets)
  }

  /** Retry the removals the store failed, a batch at a time. */
  async #retryOrphans () {
    const batch = [...this.orphans].slice(0, PEER_BATCH)
    await Promise.all(batch.map(([id, assets]) => this.#forget(id, assets)))
  }

  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  #serveHttp (req, res) {
    const path = (req.url ?? '/').split('?')[0]
    const json = (/** @type {number} */ status, /** @type {object} */ body) => {
      res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'cache-control': 'no-store' })
      res.end(JSON.stringify(body))
    }
    const fail = (/** @type {MayghError} */ err) => json(err.status ?? 500, { error: { code: err.code, message: err.message } })
    // Every endpoint only reads (HEAD: the same answer without its body, as Node sends it).
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.metrics.countError(ERRORS.MGH_ERR_HTTP_METHOD.code)
      res.setHeader('allow', 'GET, HEAD')
      return fail(new MayghError(ERRORS.MGH_ERR_HTTP_METHOD, `${req.method} ${path}`))
    }
    if (path === '/healthz') return json(200, { ok: true, shard: this.shard })
    if (path === '/readyz') {
      const ready = this.ready()
      return json(ready ? 200 : 503, { ready, shard: this.shard, store: this.presence?.up === true ? 'up' : 'down', draining: this.draining })
    }
    if (path === '/stats') {
      this.#usageTotals().then((usage) => json(200, { ...this.stats(), usage }), () => json(200, { ...this.stats(), usage: null }))
      return
    }
    if (path === '/usage') {
      const query = new URL(req.url ?? '/', 'http://x').searchParams
      const minutes = Number(query.get('minutes') ?? 60)
      if (!Number.isInteger(minutes) || minutes < 1 || minutes > USAGE_MAX_MINUTES) return fail(new MayghError(ERRORS.MGH_ERR_HTTP_BAD_QUERY, `minutes=${query.get('minutes')}`))
      this.#usage(query.get('site'), minutes).then((body) => json(200, body), (err) => {
        this.warn(err, 'usage read failed')
        fail(new MayghError(ERRORS.MGH_ERR_STORE))
      })
      return
    }
    if (path === '/held') {
      this.#held(req).then((held) => json(200, { held }), fail)
      return
    }
    if (path === '/dashboard') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
      res.end(DASHBOARD)
      return
    }
    if (path === '/dashboard/chart.js') {
      chartJs ??= loadChartJs()
      chartJs.then((code) => {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'max-age=86400' })
        res.end(code)
      }, (err) => {
        this.warn(err, 'chart.js not served')
        fail(new MayghError(ERRORS.MGH_ERR_HTTP_NOT_FOUND, err.message))
      })
      return
    }
    if (path === '/metrics') {
      this.metrics.text().then(({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' })
        res.end(body)
      }, (err) => {
        this.warn(err, 'metrics failed')
        res.writeHead(500)
        res.end()
      })
      return
    }
    fail(new MayghError(ERRORS.MGH_ERR_HTTP_NOT_FOUND))
  }

  /**
   * `GET /held?hashes=a,b`: which of these assets (at most maxLookupHashes)
   * some live visitor holds, for the asker's network under pairWithinNetwork.
   * Names no holder and introduces nobody (a lookup does that): a service
   * worker asks it before its page has joined, so that what nobody holds
   * goes to the origin at once. Each asset nobody holds counts as a lookup
   * that missed (its page makes none); a held one is counted by its page's lookup. Pages of origins allowedOrigins does not
   * list are refused. A store that fails or is slow answers MGH_ERR_STORE
   * (the worker then waits for its page, as without it).
   * @param {import('node:http').IncomingMessage} req
   * @returns {Promise<string[]>}
   */
  async #held (req) {
    const origin = req.headers.origin
    if (this.config.allowedOrigins !== null && !(origin && this.config.allowedOrigins.includes(origin))) throw new MayghError(ERRORS.MGH_ERR_ORIGIN_NOT_ALLOWED)
    const list = new URL(req.url ?? '/', 'http://x').searchParams.get('hashes')?.split(',') ?? []
    if (!list.length || list.length > LIMITS.maxLookupHashes || !list.every(isSri)) throw new MayghError(ERRORS.MGH_ERR_HTTP_BAD_QUERY, `hashes: 1 to ${LIMITS.maxLookupHashes} SRI sha256 names, comma separated`)
    const hashes = [...new Set(list)]
    const scope = this.config.pairWithinNetwork ? `${await this.networks.name(req.socket.remoteAddress ?? '')}/` : ''
    const started = performance.now()
    try {
      const found = await this.store.sampleHolders(hashes.map((hash) => scope + hash), 1)
      this.metrics.countHeldCheck()
      // An asset nobody holds goes to the origin with no lookup of its page's: counted as the lookup
      // that missed (a held one is counted by the lookup its page makes next).
      const misses = found.filter((holders) => holders.length === 0).length
      this.counters.lookups += misses
      this.metrics.countLookups(0, misses)
      return hashes.filter((_, i) => found[i].length > 0)
    } catch (err) {
      this.warn(err, 'held failed')
      throw new MayghError(ERRORS.MGH_ERR_STORE)
    } finally {
      this.metrics.observeStore('lookup', performance.now() - started)
    }
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
