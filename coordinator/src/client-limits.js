/**
 * Limits that follow the client, not its socket. A socket's rate-limit
 * bucket and its count of dropped frames are kept when it closes, under its
 * address (and under its visitor, when the site signs join tokens), and a
 * new socket of that client starts from them instead of a fresh burst: a
 * flooder that reconnects whenever it is cut off gets the sustained rate,
 * not a burst per socket, and is cut off again at its first dropped frame.
 * An address whose client was cut off for flooding is refused its next
 * WebSocket upgrades (HTTP 429), until it has been quiet for
 * a second (each refused attempt counts as one more dropped frame): cutting
 * off a flooder that reconnects in a loop would otherwise cost the
 * coordinator a WebSocket handshake and a join every few frames.
 * A kept state is forgotten once it is as good as new (the bucket full, no
 * drop episode running); at most MAX_KEPT are kept, the oldest going first.
 *
 * It also counts the TCP connections open from each address, whether or not
 * they have upgraded to a WebSocket (a socket that never sends its upgrade
 * costs a file descriptor all the same), for `maxConnectionsPerIp`.
 *
 * The same carry-over holds for a socket's allowance of holders it may be
 * handed that it did not know (Session.newHolder): a harvester that
 * reconnects starts where it left off.
 */

/** Kept states at most (about 100 bytes each). */
export const MAX_KEPT = 100_000

/** Drops less than this far apart belong to one episode (Session.drop). */
export const EPISODE_GAP_MS = 1000

/**
 * What a socket's rate limit (and new-holder allowance: `holders`, counted at `holdersAt`) had when it closed.
 * @typedef {{ tokens: number, refilledAt: number, dropped: number, lastDropAt: number, holders: number, holdersAt: number }} LimitState
 */

/**
 * A bucket's tokens at `at`, refilled at `rate` since it was last counted (uncapped).
 * @param {{ tokens: number, refilledAt: number }} s
 * @param {number} at ms
 * @param {number} rate tokens per second
 */
export const tokensAt = (s, at, rate) => s.tokens + (at - s.refilledAt) * rate / 1000

/**
 * Take `n` from a token bucket, refilled at `rate` per second up to `burst` first.
 * @param {{ tokens: number, refilledAt: number }} b
 * @param {number} n
 * @param {number} now ms
 * @param {number} rate
 * @param {number} burst
 * @returns {boolean} false, and nothing taken, when it holds fewer
 */
export function takeFrom (b, n, now, rate, burst) {
  b.tokens = Math.min(burst, tokensAt(b, now, rate))
  b.refilledAt = now
  if (b.tokens < n) return false
  b.tokens -= n
  return true
}

export class ClientLimits {
  /**
   * @param {{ rateLimitPerSecond: number, rateLimitBurst: number, rateLimitCloseAfter: number, maxConnectionsPerIp: number, limitsByAddress: boolean, newHolderBurst?: number, newHoldersPerSecond?: number }} config
   *   (no new-holder bound without `newHolderBurst`)
   * @param {() => number} now the sessions' clock (monotonic ms)
   */
  constructor ({ rateLimitPerSecond, rateLimitBurst, rateLimitCloseAfter, maxConnectionsPerIp, limitsByAddress, newHolderBurst = 0, newHoldersPerSecond = 0 }, now) {
    /** whether an address stands for one client (not behind a proxy): its limits follow it */
    this.byAddress = limitsByAddress
    this.rate = rateLimitPerSecond
    this.burst = rateLimitBurst
    this.closeAfter = rateLimitCloseAfter
    this.maxPerIp = maxConnectionsPerIp
    this.now = now
    /** @type {Map<string, LimitState>} by key (`a:` address, `v:` visitor), oldest first */
    this.kept = new Map()
    /** @type {Map<string, number>} TCP connections open, by address */
    this.open = new Map()
    /** new-holder allowance: burst (0 = no bound) and refill per second */
    this.holderBurst = newHolderBurst
    this.holderRate = newHoldersPerSecond
  }

  /**
   * A TCP connection opened from `ip`: counted until `disconnected`.
   * @param {string} ip
   * @returns {boolean} whether it is within maxConnectionsPerIp (it is counted either way)
   */
  connected (ip) {
    const n = (this.open.get(ip) ?? 0) + 1
    this.open.set(ip, n)
    return this.maxPerIp === 0 || n <= this.maxPerIp
  }

  /** @param {string} ip a connection counted by `connected` closed */
  disconnected (ip) {
    const n = (this.open.get(ip) ?? 1) - 1
    if (n <= 0) this.open.delete(ip)
    else this.open.set(ip, n)
  }

  /**
   * Whether a connection from `ip` is refused: its client was cut off for
   * flooding and has not been quiet for EPISODE_GAP_MS since (this attempt
   * counts as a dropped frame of the episode).
   * @param {string} ip
   */
  barred (ip) {
    if (!this.byAddress) return false
    const s = this.kept.get(`a:${ip}`)
    if (s === undefined || s.dropped < this.closeAfter) return false
    const now = this.now()
    if (now - s.lastDropAt > EPISODE_GAP_MS) return false
    s.dropped++
    s.lastDropAt = now
    return true
  }

  /**
   * A new socket, or one whose visitor its join just named: it carries on
   * from what its client's earlier sockets left, where that is worse than its own.
   * @param {import('./session.js').Session} session
   */
  resume (session) {
    const carried = this.carried(session.limitState(), this.keysOf(session.ip, session.visitor))
    if (carried) session.carry(carried)
  }

  /** @param {import('./session.js').Session} session closed: what its limit had is kept for its client's next socket */
  left (session) {
    this.keep(session.limitState(), this.keysOf(session.ip, session.visitor))
  }

  /**
   * Keep what a closed socket's limit had under each of its keys, unless it
   * is as good as new.
   * @param {LimitState} state
   * @param {string[]} keys
   */
  keep (state, keys) {
    if (this.#fresh(state)) return
    for (const key of keys) {
      const was = this.kept.get(key)
      this.kept.delete(key)
      this.kept.set(key, was === undefined ? { ...state } : this.#worse(was, state))
    }
    while (this.kept.size > MAX_KEPT) this.kept.delete(/** @type {string} */ (this.kept.keys().next().value))
  }

  /**
   * What a new socket's limit should start from, by the states kept under
   * its keys (the worst of them and its own), or undefined to keep its own.
   * @param {LimitState} own
   * @param {string[]} keys
   * @returns {LimitState | undefined}
   */
  carried (own, keys) {
    let state
    for (const key of keys) {
      const was = this.kept.get(key)
      if (was === undefined) continue
      if (this.#fresh(was)) {
        this.kept.delete(key)
        continue
      }
      state = this.#worse(state ?? own, was)
    }
    return state
  }

  /**
   * What a client's limit is kept under: its address (unless addresses do not stand for clients)
   * and its visitor (with join tokens).
   * @param {string} ip
   * @param {string} visitor the site's name for it ('' without a join token)
   * @returns {string[]}
   */
  keysOf (ip, visitor) {
    const keys = this.byAddress ? [`a:${ip}`] : []
    if (visitor !== '') keys.push(`v:${visitor}`)
    return keys
  }

  /** @param {LimitState} s whether its buckets would be full by now and its drop episode is over */
  #fresh (s) {
    const now = this.now()
    return tokensAt(s, now, this.rate) >= this.burst && now - s.lastDropAt > EPISODE_GAP_MS &&
      holdersAt(s, now, this.holderRate) >= this.holderBurst
  }

  /**
   * The more depleted of two states: the fewer tokens and new holders (each
   * refilled to the later of their times), and the later drop episode.
   * @param {LimitState} a
   * @param {LimitState} b
   * @returns {LimitState}
   */
  #worse (a, b) {
    const at = Math.max(a.refilledAt, b.refilledAt)
    const hAt = Math.max(a.holdersAt, b.holdersAt)
    const [late, early] = a.lastDropAt >= b.lastDropAt ? [a, b] : [b, a]
    // Two episodes that overlap count as one (sockets of one client flooding at once); else the later one.
    const dropped = late.lastDropAt - early.lastDropAt <= EPISODE_GAP_MS ? Math.max(a.dropped, b.dropped) : late.dropped
    return {
      tokens: Math.min(tokensAt(a, at, this.rate), tokensAt(b, at, this.rate)),
      refilledAt: at,
      dropped,
      lastDropAt: late.lastDropAt,
      holders: Math.min(holdersAt(a, hAt, this.holderRate), holdersAt(b, hAt, this.holderRate)),
      holdersAt: hAt
    }
  }
}

/**
 * A state's new-holder allowance at `at`, refilled at `rate` (uncapped).
 * @param {LimitState} s
 * @param {number} at ms
 * @param {number} rate per second
 */
const holdersAt = (s, at, rate) => tokensAt({ tokens: s.holders, refilledAt: s.holdersAt }, at, rate)
