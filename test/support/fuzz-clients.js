/**
 * The two clients the coordinator's fuzzing runs drive, shared by the quick
 * property test (coordinator/test/fuzz.test.js) and the long run
 * (bench/fuzz-coordinator.js): a fuzzing client that sends sessions of
 * generated frames and checks every reply and close against the protocol
 * (only coordinator messages, registered error codes, close codes the
 * protocol names), summing what it saw in a tally; and a well-behaved pair
 * of peers that checks it is still served exactly. What they send comes from
 * test/support/fuzz-arbitraries.js.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { isDeepStrictEqual } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { ERRORS, PEER_ID_PATTERN, PROTOCOL_VERSION } from '../../protocol/index.js'
import { isSignal } from '../../coordinator/src/fields.js'

/** @typedef {import('./fuzz-arbitraries.js').FuzzTargets} FuzzTargets */
/** @typedef {import('./fuzz-arbitraries.js').Frame} Frame */
/** @typedef {import('./fuzz-arbitraries.js').FuzzSession} FuzzSession */

/** Message types a coordinator sends (docs/protocol.md, "coordinator → client"). */
export const REPLY_TYPES = Object.freeze(new Set(['welcome', 'updated', 'holders', 'held', 'relayed', 'reported', 'counted', 'connect', 'move', 'error']))

/**
 * Close codes a coordinator may end a client's socket with: those of the
 * errors registry (1008, 1012), and those `ws` closes with when a peer breaks
 * the framing: 1002 (protocol error), 1007 (text that is not UTF-8) and 1009
 * (a frame over hardMaxMessageBytes, docs/protocol.md).
 */
export const CLOSE_CODES = Object.freeze(new Set([...Object.values(ERRORS).flatMap((e) => e.close === undefined ? [] : [e.close]), 1002, 1007, 1009]))

/**
 * What fuzzing clients saw, summed over them.
 * @typedef {object} FuzzTally
 * @property {number} frames frames sent, raw wire frames included
 * @property {number} sessions
 * @property {number} replies messages received
 * @property {Record<string, number>} errorsByCode `error` replies by code
 * @property {Record<string, number>} closesByCode closes the coordinator chose, by code
 * @property {Record<string, number>} refusedByStatus upgrades the coordinator refused, by HTTP status (429: an
 *   address just cut off for flooding); the fuzzer tries again REFUSED_RETRY_MS later
 * @property {number} problemCount replies or closes the protocol does not allow
 * @property {string[]} problems the first 50 of them, described
 */

/** @returns {FuzzTally} */
export function newTally () {
  return { frames: 0, sessions: 0, replies: 0, errorsByCode: {}, closesByCode: {}, refusedByStatus: {}, problemCount: 0, problems: [] }
}

/**
 * @param {Record<string, number>} counts
 * @param {string | number} key
 */
function count (counts, key) {
  counts[key] = (counts[key] ?? 0) + 1
}

/** @returns {string} a fresh asset name */
const randomHash = () => `sha256-${randomBytes(32).toString('base64')}`

/**
 * @param {any} m a decoded message
 * @returns {boolean} whether it is a relayed signal as the coordinator must deliver one
 */
function isRelayedConnect (m) {
  return m.type === 'connect' && typeof m.from === 'string' && PEER_ID_PATTERN.test(m.from) && isSignal(m.signal)
}

/** refs of the fuzzing client's probes: far above any a generated frame carries */
const PROBE_REF = 2 ** 40
/** what probes look up (nobody holds it) */
const PROBE_HASH = `sha256-${'A'.repeat(43)}=`
/** a probe not answered in this long is sent again: the rate limit may have dropped the first unread */
const PROBE_RETRY_MS = 1000
/** probes sent before a socket that answers none and stays open counts as hung */
const PROBE_ATTEMPTS = 30
/** targets kept: the two well-behaved peers' slots, then a ring of fuzzing clients' ids */
const MAX_TARGETS = 64

/**
 * A fuzzing client: sends sessions of frames, reopening (and joining again)
 * whenever the coordinator closes its socket, and checks everything that
 * comes back: only coordinator messages, every `error` with a registered code
 * and a message, every close with a code the protocol names.
 */
/**
 * How long a fuzzer whose upgrade was refused waits before it tries again:
 * longer than the second of quiet after which an address cut off for
 * flooding is let in again (an attempt sooner would keep it barred).
 */
const REFUSED_RETRY_MS = 1200

export class FrameFuzzer {
  /**
   * @param {string} url
   * @param {{ targets: FuzzTargets, tally: FuzzTally, perSecond?: number, repeat?: number, localAddress?: string }} options
   *   `perSecond`: frames a second at most (to stay under the rate limit);
   *   `repeat`: times each frame is sent (a flood, to be rate limited);
   *   `localAddress`: the address it connects from (a loopback one of its own: the coordinator's limits follow addresses)
   */
  constructor (url, { targets, tally, perSecond = Infinity, repeat = 1, localAddress }) {
    this.url = url
    this.localAddress = localAddress
    this.targets = targets
    this.tally = tally
    this.perSecond = perSecond
    this.repeat = repeat
    /** @type {WebSocket | null} */
    this.ws = null
    this.joined = false
    /** @type {Promise<void>} resolves once the current socket has closed */
    this.gone = Promise.resolve()
    /** @type {WeakSet<WebSocket>} sockets this client closed itself: their close codes are its own */
    this.mine = new WeakSet()
    /** @type {Map<number, () => void>} probes waiting for their reply, by ref */
    this.probes = new Map()
    this.nextProbe = PROBE_REF
    this.sent = 0
    this.startedAt = performance.now()
  }

  /** @param {string} what */
  problem (what) {
    this.tally.problemCount++
    if (this.tally.problems.length < 50) this.tally.problems.push(what)
  }

  /**
   * One session: its frames, then its ending if it has one, then a probe.
   * @param {FuzzSession} session
   */
  async run (session) {
    this.tally.sessions++
    let ws = await this.socket(session.join)
    for (const frame of session.frames) {
      for (let i = 0; i < this.repeat; i++) {
        if (ws.readyState !== WebSocket.OPEN) ws = await this.socket(session.join)
        await this.pace()
        send(ws, frame)
        this.tally.frames++
      }
    }
    if (session.end !== null && ws.readyState === WebSocket.OPEN) {
      const { end } = session
      // raw bytes go past `ws`'s own framing, straight onto its TCP socket
      if (end.kind === 'wire') /** @type {{ _socket: import('node:net').Socket }} */ (/** @type {unknown} */ (ws))._socket.write(end.data)
      else send(ws, end)
      this.tally.frames++
    }
    await this.probe(ws)
    if (!session.keep) await this.close()
  }

  /**
   * The open socket, or a new one; joined first when `join` and not yet.
   * @param {boolean} join
   * @returns {Promise<WebSocket>}
   */
  async socket (join) {
    while (this.ws === null || this.ws.readyState !== WebSocket.OPEN) {
      await this.gone
      const ws = this.ws = new WebSocket(this.url, this.localAddress === undefined ? {} : { localAddress: this.localAddress })
      let refused = 0
      ws.once('unexpected-response', (_, res) => {
        refused = res.statusCode ?? 0
        count(this.tally.refusedByStatus, refused)
        this.mine.add(ws) // its close is ours, not a code the coordinator chose
        ws.terminate()
      })
      this.joined = false
      ws.on('message', (data, isBinary) => this.check(String(data), isBinary))
      ws.on('error', () => {}) // a reset or a refused frame: the close that follows is what counts
      this.gone = new Promise((resolve) => ws.once('close', (code, reason) => {
        if (!this.mine.has(ws)) this.closed(code, String(reason))
        resolve()
      }))
      await new Promise((resolve) => { ws.once('open', resolve); ws.once('close', resolve) })
      if (refused !== 0) await new Promise((resolve) => setTimeout(resolve, REFUSED_RETRY_MS))
      else if (ws.readyState !== WebSocket.OPEN) throw new Error(`could not connect to ${this.url}`)
    }
    if (join && !this.joined) {
      this.ws.send(JSON.stringify({ type: 'join', v: PROTOCOL_VERSION, have: this.targets.hashes.slice(0, 2) }))
      this.joined = true
    }
    return this.ws
  }

  /**
   * A close the coordinator chose.
   * @param {number} code
   * @param {string} reason
   */
  closed (code, reason) {
    count(this.tally.closesByCode, code)
    if (!CLOSE_CODES.has(code)) this.problem(`closed with ${code} (${reason}), a code the protocol does not name`)
  }

  /**
   * Check one message from the coordinator.
   * @param {string} text
   * @param {boolean} isBinary
   */
  check (text, isBinary) {
    this.tally.replies++
    let m
    try { m = isBinary ? null : JSON.parse(text) } catch {}
    if (m === null || typeof m !== 'object' || !REPLY_TYPES.has(m?.type)) return this.problem(`not a coordinator message: ${text.slice(0, 200)}`)
    if (m.ref !== undefined && !(Number.isSafeInteger(m.ref) && m.ref >= 0)) this.problem(`a reply with a bad ref: ${text.slice(0, 200)}`)
    if (m.type === 'error') {
      if (typeof m.code === 'string' && Object.hasOwn(ERRORS, m.code) && typeof m.message === 'string') count(this.tally.errorsByCode, m.code)
      else this.problem(`an error without a registered code and a message: ${text.slice(0, 200)}`)
    }
    if (m.type === 'connect' && !isRelayedConnect(m)) this.problem(`a malformed relayed connect: ${text.slice(0, 200)}`)
    if (m.type === 'welcome' && typeof m.id === 'string') {
      const { peers } = this.targets
      if (peers.length < MAX_TARGETS) peers.push(m.id)
      else peers[2 + this.tally.sessions % (MAX_TARGETS - 2)] = m.id
    }
    if (m.ref !== undefined) this.probes.get(m.ref)?.()
  }

  /**
   * Wait until the coordinator has read what was sent: a lookup must be
   * answered (before a join too, with an error), or the socket closed. Sent
   * again each second while unanswered, in case the rate limit dropped it.
   * @param {WebSocket} ws
   */
  async probe (ws) {
    for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
      if (ws !== this.ws || ws.readyState !== WebSocket.OPEN) return
      const ref = this.nextProbe++
      const timer = new AbortController()
      const answered = new Promise((resolve) => this.probes.set(ref, () => resolve(true)))
      ws.send(JSON.stringify({ type: 'lookup', hash: PROBE_HASH, ref }))
      const done = await Promise.race([answered, this.gone.then(() => true), sleep(PROBE_RETRY_MS, false, { signal: timer.signal }).catch(() => false)])
      timer.abort()
      this.probes.delete(ref)
      if (done) return
    }
    this.problem(`no reply to ${PROBE_ATTEMPTS} probes and no close: the coordinator hangs`)
  }

  /** Keep under `perSecond`; time lost waiting for replies is not made up in a burst. */
  async pace () {
    if (this.perSecond === Infinity) return
    const wait = this.startedAt + (this.sent++ / this.perSecond) * 1000 - performance.now()
    if (wait > 1) await sleep(wait)
    else if (wait < -100) [this.startedAt, this.sent] = [performance.now(), 1]
  }

  /** Close the socket (its close code is this client's, not counted). */
  async close () {
    const ws = this.ws
    if (ws === null || ws.readyState === WebSocket.CLOSED) return
    this.mine.add(ws)
    ws.close(1000)
    await this.gone
  }
}

/**
 * @param {WebSocket} ws
 * @param {Frame} frame
 */
function send (ws, frame) {
  if (frame.kind === 'text') ws.send(frame.data)
  else if (frame.kind === 'bytes') ws.send(frame.data, { binary: frame.binary })
  else frame.data.forEach((part, i) => ws.send(part, { fin: i === frame.data.length - 1 }))
}

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @param {() => void} giveUp called when the time is up
 * @returns {Promise<T>} `promise`, or a rejection naming `what` once `ms` have passed
 */
async function deadline (promise, ms, what, giveUp) {
  const timer = new AbortController()
  const late = sleep(ms, undefined, { signal: timer.signal }).then(() => {
    giveUp()
    throw new Error(`no ${what} within ${ms} ms`)
  })
  late.catch(() => {})
  try {
    return await Promise.race([promise, late])
  } finally {
    timer.abort()
  }
}

/**
 * A peer that speaks the protocol as the browser client does, with a deadline
 * on every reply. Anything it did not ask for must be a well-formed relayed
 * `connect` (fuzzing clients may send it signals); anything else is a failure.
 */
class ProtocolPeer {
  /**
   * @param {string} url
   * @param {(what: string) => void} fail
   */
  static async open (url, fail) {
    const ws = new WebSocket(url)
    await once(ws, 'open')
    return new ProtocolPeer(ws, fail)
  }

  /**
   * @param {WebSocket} ws
   * @param {(what: string) => void} fail
   */
  constructor (ws, fail) {
    this.ws = ws
    this.fail = fail
    this.id = ''
    this.nextRef = 1
    this.leaving = false
    /** @type {Map<number, (m: any) => void>} */
    this.pending = new Map()
    /** @type {Set<{ match: (m: any) => boolean, resolve: (m: any) => void }>} */
    this.expected = new Set()
    ws.on('message', (data) => this.receive(String(data)))
    ws.on('error', () => {})
    ws.on('close', (code) => { if (!this.leaving) fail(`the coordinator closed a well-behaved socket (${code})`) })
  }

  /** @param {string} text */
  receive (text) {
    let m
    try { m = JSON.parse(text) } catch { return this.fail(`not JSON: ${text.slice(0, 200)}`) }
    const reply = m?.ref === undefined ? undefined : this.pending.get(m.ref)
    if (reply !== undefined) {
      this.pending.delete(m.ref)
      return reply(m)
    }
    if (m === null || !isRelayedConnect(m)) return this.fail(`unexpected message: ${text.slice(0, 200)}`)
    for (const e of this.expected) {
      if (e.match(m)) {
        this.expected.delete(e)
        return e.resolve(m)
      }
    }
  }

  /**
   * @param {{ type: string, [field: string]: unknown }} message
   * @param {number} timeoutMs
   * @returns {Promise<any>} the reply
   */
  request (message, timeoutMs) {
    const ref = this.nextRef++
    const reply = new Promise((resolve) => this.pending.set(ref, resolve))
    this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...message, ref }))
    return deadline(reply, timeoutMs, `reply to ${message.type} (ref ${ref})`, () => this.pending.delete(ref))
  }

  /** @param {object} message sent without a ref: answered only if it fails */
  send (message) {
    this.ws.send(JSON.stringify({ v: PROTOCOL_VERSION, ...message }))
  }

  /**
   * @param {(m: any) => boolean} match
   * @param {number} timeoutMs
   * @param {string} what
   * @returns {Promise<any>} the first relayed `connect` that matches
   */
  expect (match, timeoutMs, what) {
    const e = { match, resolve: (/** @type {any} */ m) => {} }
    const arrived = new Promise((resolve) => { e.resolve = resolve })
    this.expected.add(e)
    const settled = deadline(arrived, timeoutMs, what, () => this.expected.delete(e))
    settled.catch(() => {}) // awaited later; a round that fails first never awaits it
    return settled
  }

  async close () {
    this.leaving = true
    if (this.ws.readyState === WebSocket.CLOSED) return
    this.ws.close()
    await once(this.ws, 'close')
  }
}

/**
 * @param {unknown} list
 * @param {string[]} expected
 * @returns {boolean}
 */
const sameList = (list, expected) => Array.isArray(list) && list.length === expected.length && list.every((x, i) => x === expected[i])

/**
 * Two peers that use the coordinator as a page does, each round checking
 * every reply exactly: one looks up an asset only the other holds (and finds
 * just that one), offers it a connection (`relayed`, and the offer arrives
 * intact), gets the answer back; the holder adds and removes an asset, which
 * lookups see at once. Every tenth round one of them joins again. They hold
 * the bait assets fuzzing clients look up, so fuzzers can signal them too.
 */
export class WellBehavedPair {
  /**
   * @param {{ urls: [string, string], targets: FuzzTargets, timeoutMs?: number }} options
   *   `urls`: the coordinator of each peer (one URL twice for a single coordinator)
   */
  constructor ({ urls, targets, timeoutMs = 5000 }) {
    this.urls = urls
    this.targets = targets
    this.timeoutMs = timeoutMs
    /** @type {{ requests: number, failures: number, rounds: number, failed: string[] }} requests made, and the first failures described */
    this.stats = { requests: 0, failures: 0, rounds: 0, failed: [] }
    /** @type {{ peer: ProtocolPeer, own: string, holding: number }[]} */
    this.sides = []
  }

  /** @param {string} what */
  fail (what) {
    this.stats.failures++
    if (this.stats.failed.length < 20) this.stats.failed.push(what)
  }

  /**
   * @param {unknown} ok
   * @param {string} what
   * @param {unknown} got
   */
  check (ok, what, got) {
    if (!ok) throw new Error(`${what}: got ${JSON.stringify(got).slice(0, 300)}`)
  }

  /**
   * @param {ProtocolPeer} peer
   * @param {{ type: string, [field: string]: unknown }} message
   */
  ask (peer, message) {
    this.stats.requests++
    return peer.request(message, this.timeoutMs)
  }

  async start () {
    if (this.targets.hashes.length === 0) this.targets.hashes.push(randomHash(), randomHash(), randomHash())
    for (const i of [0, 1]) this.sides[i] = await this.join(i)
  }

  /**
   * Open side `i`'s socket and join with its own asset and the bait.
   * @param {number} i
   */
  async join (i) {
    const peer = await ProtocolPeer.open(this.urls[i], (what) => this.fail(what))
    const own = randomHash()
    const have = [own, ...this.targets.hashes]
    const welcome = await this.ask(peer, { type: 'join', have })
    this.check(welcome.type === 'welcome' && PEER_ID_PATTERN.test(welcome.id) && welcome.holding === have.length &&
      Array.isArray(welcome.iceServers) && Number.isInteger(welcome.limits?.maxMessageBytes), 'join', welcome)
    peer.id = welcome.id
    this.targets.peers[i] = welcome.id
    return { peer, own, holding: have.length }
  }

  /**
   * Side `i` leaves and joins again (a failure if it cannot).
   * @param {number} i
   */
  async rejoin (i) {
    await this.sides[i]?.peer.close()
    try {
      this.sides[i] = await this.join(i)
    } catch (err) {
      this.fail(`join again: ${err.message}`)
    }
  }

  /** One round; a failed one counts once, and both peers start again from a fresh join. */
  async round () {
    const n = this.stats.rounds++
    const [asker, holder] = n % 2 === 0 ? this.sides : [this.sides[1], this.sides[0]]
    try {
      await this.exchange(n, asker, holder)
    } catch (err) {
      this.fail(`round ${n}: ${err.message}`)
      for (const i of [0, 1]) await this.rejoin(i)
      return
    }
    if (n % 10 === 9) await this.rejoin(n % 2)
  }

  /**
   * @param {number} n
   * @param {{ peer: ProtocolPeer, own: string, holding: number }} asker
   * @param {{ peer: ProtocolPeer, own: string, holding: number }} holder
   */
  async exchange (n, asker, holder) {
    const { timeoutMs } = this
    const found = await this.ask(asker.peer, { type: 'lookup', hash: holder.own })
    this.check(found.type === 'holders' && found.hash === holder.own && sameList(found.peers, [holder.peer.id]), 'lookup of an asset one peer holds', found)
    const cid = `wb${n}-${randomBytes(6).toString('hex')}`
    const offer = { cid, sdp: { type: 'offer', sdp: `v=0 round ${n}` } }
    const offered = holder.peer.expect((m) => m.from === asker.peer.id && m.signal.cid === cid, timeoutMs, `offer ${cid}`)
    const relayed = await this.ask(asker.peer, { type: 'connect', to: holder.peer.id, signal: offer })
    this.check(relayed.type === 'relayed' && relayed.to === holder.peer.id, 'connect with a ref', relayed)
    this.check(isDeepStrictEqual((await offered).signal, offer), 'the relayed offer', await offered)
    const answer = { cid, sdp: { type: 'answer', sdp: 'v=0' } }
    const answered = asker.peer.expect((m) => m.from === holder.peer.id && m.signal.cid === cid, timeoutMs, `answer ${cid}`)
    this.stats.requests++
    holder.peer.send({ type: 'connect', to: asker.peer.id, signal: answer })
    this.check(isDeepStrictEqual((await answered).signal, answer), 'the relayed answer', await answered)
    const fresh = randomHash()
    const added = await this.ask(holder.peer, { type: 'update', add: [fresh] })
    this.check(added.type === 'updated' && added.holding === holder.holding + 1, 'update add', added)
    const seen = await this.ask(asker.peer, { type: 'lookup', hash: fresh })
    this.check(sameList(seen.peers, [holder.peer.id]), 'lookup after add', seen)
    const removed = await this.ask(holder.peer, { type: 'update', remove: [fresh] })
    this.check(removed.type === 'updated' && removed.holding === holder.holding, 'update remove', removed)
    const unseen = await this.ask(asker.peer, { type: 'lookup', hash: fresh })
    this.check(sameList(unseen.peers, []), 'lookup after remove', unseen)
  }

  /**
   * Play rounds until `stop()` says so.
   * @param {() => boolean} stop
   * @param {number} [pauseMs] between rounds (a turn of the event loop at least)
   */
  async runUntil (stop, pauseMs = 0) {
    while (!stop()) {
      await this.round()
      await sleep(pauseMs)
    }
  }

  async close () {
    await Promise.all(this.sides.map((s) => s.peer.close()))
  }
}
