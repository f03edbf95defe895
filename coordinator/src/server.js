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
import { ERRORS, MayghError } from '../../protocol/index.js'
import { parseMessage } from './message-parser.js'
import { HANDLERS, ORDERED_TYPES } from './handlers/index.js'
import { Session } from './session.js'
import { Relay } from './relay.js'
import { Heartbeat } from './heartbeat.js'
import { Presence } from './presence.js'
import { PEER_BATCH } from './store/redis-store.js'

/** removals kept to retry while the store is down; past this, a gone peer may stay listed until its shard restarts */
const MAX_ORPHANS = 100_000
import { openStore } from './store/index.js'
import { startStunServer } from './stun/stun-server.js'

/**
 * Start a coordinator.
 *
 * @param {Partial<typeof import('./config.js').DEFAULTS>} [options] see config.js
 * @param {{ store?: import('./store/store.js').Store, now?: () => number }} [deps] `store`: a store
 *   to share (the caller closes it); `now`: the rate limiter's monotonic clock in ms (tests advance their own)
 * @returns {Promise<Coordinator>}
 */
export async function startCoordinator (options = {}, deps = {}) {
  const config = resolveConfig(options)
  const ownsStore = deps.store === undefined
  const store = deps.store ?? await openStore(config)
  const coordinator = new Coordinator(config, { store, ownsStore, now: deps.now })
  try {
    await coordinator.start()
  } catch (err) {
    if (ownsStore) await store.close()
    throw err
  }
  return coordinator
}

/**
 * Emits `warning` (err, context) for every client error and store failure; it
 * never throws for anything a client sends.
 */
export class Coordinator extends EventEmitter {
  /**
   * @param {Readonly<import('./config.js').Config>} config
   * @param {object} deps
   * @param {import('./store/store.js').Store} deps.store an open store
   * @param {boolean} deps.ownsStore whether close() closes it too
   * @param {() => number} [deps.now] each session's rate-limit clock (default: performance.now)
   */
  constructor (config, { store, ownsStore, now }) {
    super()
    this.config = config
    this.now = now
    // A random suffix per start: a restarted coordinator, or two started with the
    // same name by mistake, never answer for each other's peers.
    const suffix = randomBytes(6).toString('base64url')
    this.shard = config.shardId === null ? suffix : `${config.shardId}.${suffix}`
    this.ownsStore = ownsStore
    this.store = store
    /** @type {Map<string, Session>} joined peers on this shard, by id */
    this.sessions = new Map()
    /** @type {Set<Session>} every open connection */
    this.connections = new Set()
    this.counters = { connections: 0, messages: 0, lookups: 0, lookupHits: 0, updates: 0, relayed: 0, forwarded: 0, errors: 0 }
    this.url = ''
    /** the URL other shards hand out for this one (`publicUrl`, else `url`) */
    this.publicUrl = ''
    /** set by drain(): no more joins */
    this.draining = false
    /** @type {Map<string, string[]>} peers the store failed to remove (or to add, for a join that failed), to remove again */
    this.orphans = new Map()
    this.httpUrl = ''
    this.stunUrl = ''
    this.lastTick = 0
    this.clock = () => (this.lastTick = Math.max(Date.now(), this.lastTick + 1))
    this.warn = (/** @type {Error} */ err, /** @type {string} */ context) => { this.emit('warning', err, context) }
  }

  async start () {
    const { config } = this
    this.stun = config.stunPort === -1 ? null : await startStunServer({ port: config.stunPort, host: config.host })
    this.stunUrl = this.stun?.url ?? ''
    this.iceServers = config.iceServers ?? [{ urls: this.stunUrl }]
    this.relay = new Relay({ shard: this.shard, store: this.store, sessions: this.sessions, counters: this.counters })
    await this.relay.start()

    this.http = createServer((req, res) => { this.#serveHttp(req, res) })
    this.wss = new WebSocketServer({ server: this.http, maxPayload: config.hardMaxMessageBytes })
    this.wss.on('connection', (ws) => this.#accept(ws))
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
    this.presence.on('up', () => this.emit('notice', 'store up'))
    await this.presence.start()

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
    let holdings = 0
    for (const session of this.sessions.values()) holdings += session.assets.size
    return { peers: this.sessions.size, holdings }
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

  /** Whether this coordinator should get new clients: registered with a reachable store, and not draining. */
  ready () {
    return this.presence?.registered === true && !this.draining
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
          if (id !== null && !session.closed) await this.store.addPeer(id, [...session.assets]).catch((err) => this.warn(err, `listing ${id} again failed`))
          resolve(undefined)
        })
      })))
    }
  }

  /**
   * @param {import('ws').WebSocket} ws
   */
  #accept (ws) {
    const session = new Session(ws, this.config, { now: this.now })
    this.connections.add(session)
    this.counters.connections++
    ws.on('pong', () => { session.alive = true })
    ws.on('message', (data, isBinary) => this.#receive(session, /** @type {Buffer} */ (data), isBinary))
    // ws reports protocol violations (e.g. a frame over hardMaxMessageBytes) here, then closes.
    ws.on('error', (err) => this.warn(err, 'socket error'))
    ws.on('close', () => this.#drop(session))
  }

  /**
   * @param {Session} session
   * @param {Buffer} data
   * @param {boolean} isBinary
   */
  #receive (session, data, isBinary) {
    session.alive = true
    this.counters.messages++
    // Every frame costs a token; a refused one is still parsed (cheap: bounded by
    // maxMessageBytes) so that the refusal carries the request's ref.
    const allowed = session.takeToken()
    let message
    try {
      message = parseMessage(data, isBinary, this.config)
    } catch (err) {
      this.#replyError(session, allowed ? err : new MayghError(ERRORS.MGH_ERR_RATE_LIMITED), err.ref)
      return
    }
    if (!allowed) {
      this.#replyError(session, new MayghError(ERRORS.MGH_ERR_RATE_LIMITED), message.ref)
      return
    }
    const handler = HANDLERS[message.type]
    const context = {
      session,
      store: this.store,
      config: this.config,
      shard: this.shard,
      sessions: this.sessions,
      iceServers: /** @type {object[]} */ (this.iceServers),
      relay: /** @type {Relay} */ (this.relay),
      counters: this.counters,
      clock: this.clock,
      warn: this.warn,
      coordinator: this,
      orphan: (/** @type {string} */ id, /** @type {string[]} */ assets) => { if (this.orphans.size < MAX_ORPHANS) this.orphans.set(id, assets) }
    }
    const run = async () => {
      if (session.closed) return
      try {
        const reply = await handler(message, context)
        if (reply !== undefined) session.send(message.ref === undefined ? reply : { ...reply, ref: message.ref })
        // A join that finished after its socket closed: the close handler saw no peer; remove it here.
        if (session.closed && message.type === 'join') await this.#removePeer(session)
      } catch (err) {
        this.#replyError(session, err, message.ref)
      }
    }
    if (ORDERED_TYPES.has(message.type)) session.enqueue(run)
    else session.after(run)
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
    this.warn(/** @type {Error} */ (err), `replied ${error.code}`)
    const alternates = error.code === 'MGH_ERR_DRAINING' ? { alternates: this.alternates() } : {}
    session.send({ type: 'error', code: error.code, message: error.message, ...alternates, ...(ref === undefined ? {} : { ref }) })
    if (error.close !== undefined) session.ws.close(error.close, error.message)
  }

  /**
   * @param {Session} session
   */
  #drop (session) {
    session.closed = true
    this.connections.delete(session)
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
    await this.#forget(id, [...session.assets, ...session.unsure])
  }

  /**
   * Take a peer out of the store; when the store fails, keep it to retry
   * after the next beat that succeeds, so no gone peer stays listed.
   * @param {string} id
   * @param {string[]} assets
   */
  async #forget (id, assets) {
    try {
      await this.store.removePeer(id, assets)
      this.orphans.delete(id)
    } catch (err) {
      this.warn(/** @type {Error} */ (err), `removing peer ${id} failed; retried after the next beat`)
      if (this.orphans.size < MAX_ORPHANS) this.orphans.set(id, assets)
    }
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
    if (path === '/healthz') return json(200, { ok: true, shard: this.shard })
    if (path === '/readyz') {
      const ready = this.ready()
      return json(ready ? 200 : 503, { ready, shard: this.shard, store: this.presence?.up === true ? 'up' : 'down', draining: this.draining })
    }
    if (path === '/stats') return json(200, this.stats())
    fail(new MayghError(ERRORS.MGH_ERR_HTTP_NOT_FOUND))
  }

  /**
   * Stop: close every socket (1012, so clients reconnect elsewhere), take this
   * shard's peers out of the store, stop STUN, and close the store if it is ours.
   */
  async close () {
    this.heartbeat?.stop()
    const { close, message } = new MayghError(this.draining ? ERRORS.MGH_ERR_DRAINING : ERRORS.MGH_ERR_SHUTTING_DOWN)
    const open = [...this.connections]
    for (const session of open) session.ws.close(/** @type {number} */ (close), message)
    // A client that does not answer the close frame within a second is cut off.
    const cutoff = setTimeout(() => { for (const s of open) s.ws.terminate() }, 1000)
    await Promise.all(open.map((s) => s.ws.readyState === s.ws.CLOSED ? null : once(s.ws, 'close')))
    clearTimeout(cutoff)
    await Promise.all(open.map((s) => s.queue))
    await this.presence?.stop()
    await this.relay?.stop()
    await new Promise((resolve) => this.wss ? this.wss.close(() => resolve(undefined)) : resolve(undefined))
    if (this.http?.listening) await new Promise((resolve) => this.http?.close(resolve))
    await this.stun?.close()
    if (this.ownsStore) await this.store.close()
  }
}
