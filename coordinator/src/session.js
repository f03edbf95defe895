/**
 * One client connection: its socket, the peer it joined as, what that peer
 * holds, and the queue that orders its state changes. Joins, updates and the
 * removal on close run one at a time per peer, which keeps the store in step
 * with the session without locks; lookups and relays run as soon as the
 * changes sent before them are done, concurrently with each other.
 */
import { ERRORS, MayghError } from '../../protocol/index.js'
import { Introductions } from './introductions.js'
import { EPISODE_GAP_MS, takeFrom } from './client-limits.js'

/** The rate limiter's default clock: monotonic, so a wall-clock step cannot refill or drain the bucket. */
const monotonicNow = () => performance.now()

export class Session {
  /**
   * @param {import('ws').WebSocket} ws
   * @param {{ rateLimitPerSecond: number, rateLimitBurst: number, maxSendBufferBytes: number, newHolderBurst?: number, newHoldersPerSecond?: number } & ConstructorParameters<typeof Introductions>[0]} limits
   * @param {{ id?: number, now?: () => number, onSlowReader?: (session: Session) => void }} [deps]
   *   `id`: the connection's serial number (for logs); `now`: milliseconds on a monotonic clock
   *   (a test passes one it advances, to refill the bucket without waiting);
   *   `onSlowReader`: called instead of sending when the socket has more unread than the limit
   */
  constructor (ws, limits, { id = 0, now = monotonicNow, onSlowReader = () => {} } = {}) {
    const { rateLimitPerSecond, rateLimitBurst, maxSendBufferBytes, newHolderBurst = 0, newHoldersPerSecond = 0 } = limits
    this.ws = ws
    this.limits = limits
    this.id = id
    /** @type {Map<string, number> | null} error codes this connection had, for logging each once (logger.js) */
    this.errorCounts = null
    /** the address it connected from ('' unknown): counted per IP, logged only if allowed */
    this.ip = ''
    /** the page's origin (the upgrade's `Origin` header; '' when none) */
    this.origin = ''
    /** the site's name for this visitor, from its join token ('' without one) */
    this.visitor = ''
    /** who the visitor is for reports and quarantine, across reconnections (quarantine.js `subjectOf`); set by `join` */
    this.subject = ''
    /** quarantined: not handed out, announcements ignored */
    this.quarantined = false
    /** what its store keys start with: '' or, under `pairWithinNetwork`, its network's name and '/' (set by `join`) */
    this.scope = ''
    /** `usage` reports with an `id` it has sent (usage.js USAGE_IDS_PER_SOCKET) */
    this.usageIds = 0
    /** lists what it announces; false after `update {serving: false}` (receive-only, its upload budget spent) until `serving: true` */
    this.serving = true
    /** joined `fetchOnly` (a service worker's socket): lists nothing, and is not counted among the peers online */
    this.fetchOnly = false
    /** @type {Introductions | null} the peers this one may signal, made on first use */
    this.introductions = null
    /** @type {ReturnType<typeof setTimeout> | undefined} closes the socket if it has not joined in time */
    this.joinTimer = undefined
    /** @type {import('./metrics.js').CloseReason} why the socket closed, set by whoever closes it */
    this.closeReason = 'client'
    this.maxSendBufferBytes = maxSendBufferBytes
    this.onSlowReader = onSlowReader
    /** @type {string | null} set by `join` */
    this.peerId = null
    /** @type {Set<string>} hashes the peer holds, as the store lists them */
    this.assets = new Set()
    /** @type {Set<string> | null} hashes the store may list for the peer or not (a change that failed): removed again when it leaves */
    this.unsure = null
    this.closed = false
    /** sent something (a message or a pong) since the heartbeat's last round */
    this.heard = true
    /** a ping went out in the last round and nothing has come since */
    this.pinged = false
    /** @type {Promise<void>} tail of this peer's message queue */
    this.queue = Promise.resolve()
    /** ordered tasks queued and not finished */
    this.pending = 0
    this.rate = rateLimitPerSecond
    this.burst = rateLimitBurst
    this.tokens = rateLimitBurst
    this.now = now
    /** whether `now` is performance.now's clock (not a test's): then a reading of it may time a metric too */
    this.realClock = now === monotonicNow
    this.refilledAt = now()
    /** frames dropped by the rate limit in the current episode (drops less than a second apart) */
    this.dropped = 0
    this.lastDropAt = -Infinity
    /** holders it may still be handed that it did not know (newHolderBurst, refilled at newHoldersPerSecond; no bound at 0) */
    this.holderBurst = newHolderBurst
    this.holderRate = newHoldersPerSecond
    this.holderBucket = { tokens: newHolderBurst, refilledAt: this.refilledAt }
  }

  /**
   * The store's keys for these of the peer's hashes: the hashes themselves,
   * or under `pairWithinNetwork` each prefixed with the peer's network
   * (`scope`), so that only lookups from that network find them.
   * @param {Iterable<string>} hashes
   * @returns {readonly string[]} `hashes` itself when it is an array and there is no network prefix
   */
  keys (hashes) {
    if (this.scope === '') return Array.isArray(hashes) ? hashes : Array.from(hashes)
    return Array.from(hashes, (hash) => this.scope + hash)
  }

  /**
   * @returns {this & { peerId: string }} this session, once it has joined
   * @throws {MayghError} MGH_ERR_NOT_JOINED
   */
  requirePeer () {
    if (this.peerId === null) throw new MayghError(ERRORS.MGH_ERR_NOT_JOINED)
    return /** @type {this & { peerId: string }} */ (this)
  }

  /** @returns {Introductions} the peers this one may signal */
  introduced () {
    return (this.introductions ??= new Introductions(this.limits))
  }

  /**
   * Token bucket: false (and nothing taken) when the peer has sent more than its rate allows.
   * @param {number} [n] messages' worth to take (a batched lookup costs one per asset)
   * @returns {boolean}
   */
  takeToken (n = 1) {
    return takeFrom(this, n, this.now(), this.rate, this.burst)
  }

  /**
   * Take one from the allowance of holders this peer may be handed that it
   * did not know: what keeps one client from harvesting the ids (and, by
   * signalling them, the addresses) of a site's visitors cheaply. Past it, its
   * lookups name only the holders it knows.
   * @returns {boolean} false, and nothing taken, when it is spent
   */
  newHolder () {
    return this.holderBurst === 0 || takeFrom(this.holderBucket, 1, this.now(), this.holderRate, this.holderBurst)
  }

  /**
   * Run `task` after every earlier ordered task of this session; later tasks wait for it.
   * @param {() => Promise<void> | void} task must not throw or reject
   */
  enqueue (task) {
    if (this.pending++ === 0) {
      // Nothing queued (the common case): start now, not a microtask later; a task done at
      // once (the in-process store's) leaves nothing for later ones to wait for.
      const run = task()
      if (run instanceof Promise) this.queue = run.then(() => { this.pending-- })
      else this.pending--
      return
    }
    this.queue = this.queue.then(task).then(() => { this.pending-- })
  }

  /**
   * Run `task` after every earlier ordered task, without holding up later ones:
   * reads and relays see the peer's earlier joins and updates, but do not wait
   * for each other.
   * @param {() => Promise<void> | void} task must not throw or reject
   */
  after (task) {
    // Nothing to wait for (the common case): start now, not a microtask later.
    if (this.pending === 0) task()
    else this.queue.then(task)
  }

  /** @returns {import('./client-limits.js').LimitState} what its rate limit and new-holder allowance have now (kept when it closes: client-limits.js) */
  limitState () {
    return { tokens: this.tokens, refilledAt: this.refilledAt, dropped: this.dropped, lastDropAt: this.lastDropAt, holders: this.holderBucket.tokens, holdersAt: this.holderBucket.refilledAt }
  }

  /** @param {import('./client-limits.js').LimitState} state carry on from what an earlier socket of this client had */
  carry ({ tokens, refilledAt, dropped, lastDropAt, holders, holdersAt }) {
    Object.assign(this, { tokens: Math.min(tokens, this.burst), refilledAt, dropped, lastDropAt })
    this.holderBucket = { tokens: Math.min(holders, this.holderBurst), refilledAt: holdersAt }
  }

  /**
   * Count a frame the rate limit dropped.
   * @returns {number} drops in this episode, this one included (1: the episode starts)
   */
  drop () {
    const now = this.now()
    if (now - this.lastDropAt > EPISODE_GAP_MS) this.dropped = 0
    this.lastDropAt = now
    return ++this.dropped
  }

  /**
   * Send, unless the socket is closed, or its reader has fallen so far behind
   * that more than `maxSendBufferBytes` wait unread (then `onSlowReader`).
   * @param {object} message
   */
  send (message) {
    this.sendText(JSON.stringify(message))
  }

  /** @param {string} text a message already serialised (one relayed signal: serialised once, charged and sent) */
  sendText (text) {
    if (this.ws.readyState !== this.ws.OPEN) return
    if (this.ws.bufferedAmount > this.maxSendBufferBytes) return this.onSlowReader(this)
    this.ws.send(text)
  }
}
