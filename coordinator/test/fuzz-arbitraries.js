/**
 * What the coordinator is fuzzed with, shared by the quick property test
 * (coordinator/test/fuzz.test.js) and the long run (bench/fuzz-coordinator.js):
 * fast-check arbitraries for valid client messages, for mutations of them
 * (a field removed, retyped, nested deep, oversized, a wrong `v` or `ref`, the
 * text cut or its bytes flipped), for WebSocket frames of every kind, and for
 * raw frames that break the WebSocket framing itself; and the two clients
 * both runs drive: a fuzzing client that sends them and checks every reply
 * and close, and a well-behaved pair of peers that checks it is still served.
 * Both runs need both halves, so both live here, and nothing is written twice.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { isDeepStrictEqual } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import WebSocket from 'ws'
import { ERRORS, PEER_ID_PATTERN, PROTOCOL_VERSION, REQUEST_TYPES } from '../../protocol/index.js'
import { isSignal } from '../src/message-parser.js'

/** The seed when MAYGH_FUZZ_SEED is not set: runs repeat exactly unless asked not to. */
export const DEFAULT_FUZZ_SEED = 20261201

/**
 * The run's seed: MAYGH_FUZZ_SEED when set (to reproduce a failure), else the default.
 * @param {string | undefined} [text] the variable's value
 * @returns {number}
 * @throws {TypeError} when it is not a 32-bit integer (fast-check's seed)
 */
export function fuzzSeed (text = process.env.MAYGH_FUZZ_SEED) {
  if (text === undefined || text.trim() === '') return DEFAULT_FUZZ_SEED
  const seed = Number(text)
  if (!Number.isInteger(seed) || (seed | 0) !== seed) throw new TypeError(`MAYGH_FUZZ_SEED must be a 32-bit integer, got ${JSON.stringify(text)}`)
  return seed
}

/**
 * What generated messages aim at. Read when a value is generated, so the
 * lists may grow while a run goes on (peers join); the shapes of the values
 * still follow from the seed alone.
 * @typedef {object} FuzzTargets
 * @property {{ maxMessageBytes: number, hardMaxMessageBytes: number, maxAssetsPerMessage: number }} limits the coordinator's
 * @property {string[]} hashes assets well-behaved peers hold: looking one up introduces the asker to them
 * @property {string[]} peers ids of peers that are (or were) online, on every shard: `connect` targets
 */

/**
 * A frame as the fuzzing client sends it: text (a string, or raw bytes that
 * need not be UTF-8), binary, or a text message split into WebSocket fragments.
 * @typedef {{ kind: 'text', data: string } | { kind: 'bytes', data: Uint8Array, binary: boolean } | { kind: 'fragments', data: string[] }} Frame
 */

/**
 * A last frame, after which the coordinator may well close the socket: a
 * frame, or raw bytes written under `ws`'s framing.
 * @typedef {Frame | { kind: 'wire', data: Uint8Array }} Ending
 */

/**
 * One session of a fuzzing client: join first or not, the frames, maybe an
 * ending, and whether the socket is kept for the next session.
 * @typedef {{ join: boolean, frames: Frame[], end: Ending | null, keep: boolean }} FuzzSession
 */

/** An asset name (SRI SHA-256) of 32 random bytes. */
export const hashArb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `sha256-${Buffer.from(b).toString('base64')}`)

/** A well-formed peer id on a shard that may or may not exist. */
const strangerIdArb = fc.tuple(fc.stringMatching(/^[\w.-]{1,12}$/), fc.uint8Array({ minLength: 16, maxLength: 16 }))
  .map(([shard, bytes]) => `${shard}~${Buffer.from(bytes).toString('base64url')}`)

/**
 * One element of `list` as it is when generated, or `fallback` while it is empty.
 * @template T
 * @param {T[]} list
 * @param {fc.Arbitrary<T>} fallback
 * @returns {fc.Arbitrary<T>}
 */
function pickFrom (list, fallback) {
  return fc.tuple(fc.nat(), fallback).map(([i, other]) => list.length === 0 ? other : list[i % list.length])
}

/** @param {FuzzTargets} t @returns {fc.Arbitrary<string>} a live peer's id, mostly, else a stranger's */
const peerIdArb = (t) => fc.oneof({ weight: 3, arbitrary: pickFrom(t.peers, strangerIdArb) }, { weight: 1, arbitrary: strangerIdArb })

/** @param {FuzzTargets} t @returns {fc.Arbitrary<string>} a bait asset, mostly, else a random one */
const assetArb = (t) => fc.oneof({ weight: 2, arbitrary: pickFrom(t.hashes, hashArb) }, { weight: 1, arbitrary: hashArb })

/** What browsers relay (an offer or answer, an ICE candidate), and other small objects: `signal` is opaque. */
const signalArb = fc.oneof(
  fc.record({ cid: fc.string({ maxLength: 10 }), sdp: fc.record({ type: fc.constantFrom('offer', 'answer'), sdp: fc.string({ maxLength: 300 }) }) }),
  fc.record({ cid: fc.string({ maxLength: 10 }), candidate: fc.record({ candidate: fc.string({ maxLength: 120 }), sdpMid: fc.constantFrom('0', '1'), sdpMLineIndex: fc.nat(3) }) }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
)

/**
 * Messages the protocol accepts, each type with and without `v` and `ref`.
 * @param {FuzzTargets} t
 * @returns {fc.Arbitrary<Record<string, unknown> & { type: string }>}
 */
export function validMessageArb (t) {
  const list = fc.array(assetArb(t), { maxLength: Math.min(8, t.limits.maxAssetsPerMessage) })
  /** @type {Record<string, fc.Arbitrary<Record<string, unknown>>>} */
  const bodies = {
    join: fc.record({ have: list }, { requiredKeys: [] }),
    update: fc.record({ add: list, remove: list }, { requiredKeys: [] }),
    lookup: fc.record({ hash: assetArb(t), connected: fc.array(peerIdArb(t), { maxLength: 4 }) }, { requiredKeys: ['hash'] }),
    connect: fc.record({ to: peerIdArb(t), signal: signalArb })
  }
  const envelope = fc.record({ v: fc.constant(PROTOCOL_VERSION), ref: fc.nat() }, { requiredKeys: [] })
  // A type added to the contract later gets its bare envelope until it has a body here.
  return fc.oneof(...REQUEST_TYPES.map((type) => fc.tuple(envelope, bodies[type] ?? fc.constant({})).map(([e, b]) => ({ type, ...e, ...b }))))
}

/** Values of the wrong type or range for any field: each replaces what the field held. */
const RETYPES = Object.freeze([
  () => null, () => true, () => -1, () => 1.5, () => 2 ** 53, () => 1e308, () => -0, () => '', () => [], () => ({}),
  (/** @type {unknown} */ v) => typeof v === 'number' ? String(v) : v, (/** @type {unknown} */ v) => [v], (/** @type {unknown} */ v) => ({ v }),
  (/** @type {unknown} */ v) => JSON.stringify(v) ?? null,
  (/** @type {unknown} */ v) => typeof v === 'string' ? v.slice(1) : v,
  (/** @type {unknown} */ v) => typeof v === 'string' ? `${v}=` : v,
  (/** @type {unknown} */ v) => typeof v === 'string' ? v.toUpperCase() : v
])

/** Strings a `type` may be that no handler has, some of them names every object inherits. */
const STRANGE_TYPES = Object.freeze(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'JOIN', 'join ', '', 'welcome', 'error', 'holders'])

/** @param {string} inner JSON text @param {number} depth @param {boolean} arrays @returns {string} `inner` nested `depth` deep */
function nestText (inner, depth, arrays) {
  return arrays ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`
}

/**
 * Ways to spoil one field of a message; each gives the message as JSON text.
 * Nesting is done on the text, since JSON.stringify overflows its stack long
 * before JSON.parse does.
 * @param {FuzzTargets} t
 * @returns {fc.Arbitrary<(message: Record<string, unknown>, key: string) => string>}
 */
function spoilArb (t) {
  const text = JSON.stringify
  const placeholder = '\u0000nest\u0000'
  const marker = text(placeholder)
  return fc.oneof(
    fc.constant((m, k) => text(Object.fromEntries(Object.entries(m).filter(([key]) => key !== k)))),
    fc.jsonValue({ maxDepth: 3 }).map((v) => (m, k) => text({ ...m, [k]: v })),
    fc.constantFrom(...RETYPES).map((retype) => (m, k) => text({ ...m, [k]: retype(m[k]) })),
    fc.tuple(fc.oneof(fc.integer({ min: 6, max: 12 }), fc.constantFrom(64, 1000, 5000, 20000)), fc.boolean())
      .map(([depth, arrays]) => (m, k) => text({ ...m, [k]: placeholder }).replace(marker, () => nestText(text(m[k]) ?? 'null', depth, arrays))),
    fc.constant((m, k) => text({ ...m, [k]: 'x'.repeat(t.limits.maxMessageBytes + 1) })),
    fc.tuple(hashArb, strangerIdArb).map(([hash, id]) => (m, k) => text({ ...m, [k]: Array(k === 'connected' ? 65 : t.limits.maxAssetsPerMessage + 1).fill(k === 'connected' ? id : hash) })),
    fc.oneof(fc.constantFrom(...STRANGE_TYPES), fc.string({ maxLength: 80 })).map((type) => (m) => text({ ...m, type })),
    fc.jsonValue({ maxDepth: 2 }).filter((v) => v !== PROTOCOL_VERSION).map((v) => (m) => text({ ...m, v })),
    fc.constantFrom(-1, 1.5, '1', null, 2 ** 53, 1e300, true, [], {}).map((ref) => (m) => text({ ...m, ref })),
    fc.jsonValue({ maxDepth: 2 }).map((v) => (m) => text({ ...m, ['__proto__']: v }))
  )
}

/**
 * A valid message with one field (present or not) spoiled, as JSON text.
 * @param {FuzzTargets} t
 * @returns {fc.Arbitrary<string>}
 */
export function mutatedMessageArb (t) {
  return fc.tuple(validMessageArb(t), fc.nat(), spoilArb(t)).map(([message, n, spoil]) => {
    const keys = [...new Set([...Object.keys(message), 'type', 'v', 'ref', 'extra'])]
    return spoil(message, keys[n % keys.length])
  })
}

/** Edits of a message's text: cut, a character in or out, garbage around it, a key given twice. */
const textEditArb = fc.oneof(
  fc.nat().map((n) => (/** @type {string} */ s) => s.slice(0, n % (s.length + 1))),
  fc.tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 3, unit: 'binary' })).map(([n, c]) => (/** @type {string} */ s) => s.slice(0, n % (s.length + 1)) + c + s.slice(n % (s.length + 1))),
  fc.nat().map((n) => (/** @type {string} */ s) => s.slice(0, n % (s.length + 1)) + s.slice(n % (s.length + 1) + 1)),
  fc.constantFrom('\ufeff', ' \n\t', '[', 'null,').map((p) => (/** @type {string} */ s) => p + s),
  fc.constantFrom('x', ']', '}', ',', '\u0000').map((p) => (/** @type {string} */ s) => s + p),
  fc.constantFrom('"type":"join"', '"type":7', '"ref":-1', '"v":2').map((k) => (/** @type {string} */ s) => s.replace(/}\s*$/, `,${k}}`))
)

/** @param {string} data @returns {Frame} */
const textFrame = (data) => ({ kind: 'text', data })

/**
 * Every kind of frame a client can send that the coordinator reads, most of
 * them messages valid or nearly so. (Frames after which `ws` closes the
 * socket come from {@link endingArb}: anything sent behind them is never read.)
 * @param {FuzzTargets} t
 * @returns {fc.Arbitrary<Frame>}
 */
export function frameArb (t) {
  const valid = validMessageArb(t).map((m) => JSON.stringify(m))
  const spoiled = mutatedMessageArb(t)
  const message = fc.oneof(valid, spoiled)
  return fc.oneof(
    { weight: 5, arbitrary: valid.map(textFrame) },
    { weight: 10, arbitrary: spoiled.map(textFrame) },
    { weight: 4, arbitrary: fc.tuple(message, textEditArb).map(([s, edit]) => textFrame(edit(s))) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => textFrame(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map(textFrame) },
    { weight: 2, arbitrary: fc.oneof(message.map((s) => Buffer.from(s)), fc.uint8Array({ maxLength: 300 })).map((data) => /** @type {Frame} */ ({ kind: 'bytes', data, binary: true })) },
    // a message in WebSocket fragments, which `ws` puts back together
    { weight: 1, arbitrary: fc.tuple(message, fc.array(fc.nat(), { minLength: 1, maxLength: 4 })).map(([s, cuts]) => /** @type {Frame} */ ({ kind: 'fragments', data: splitAt(s, cuts) })) },
    // over maxMessageBytes: answered MGH_ERR_TOO_LARGE
    { weight: 1, arbitrary: valid.map((s) => textFrame(s.padEnd(t.limits.maxMessageBytes + 1))) }
  )
}

/**
 * How a session may end: a message with one byte changed, sent as text
 * (mostly no longer UTF-8, which `ws` closes with 1007), a frame over
 * hardMaxMessageBytes (1009), or a raw frame that breaks the framing (1002).
 * @param {FuzzTargets} t
 * @returns {fc.Arbitrary<Ending>}
 */
export function endingArb (t) {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(fc.oneof(validMessageArb(t).map((m) => JSON.stringify(m)), mutatedMessageArb(t)), fc.nat(), fc.integer({ min: 1, max: 255 })).map(([s, at, x]) => {
        const data = Buffer.from(s)
        if (data.length > 0) data[at % data.length] ^= x
        return /** @type {Ending} */ ({ kind: 'bytes', data, binary: false })
      })
    },
    { weight: 2, arbitrary: validMessageArb(t).map((m) => /** @type {Ending} */ (textFrame(JSON.stringify(m).padEnd(t.limits.hardMaxMessageBytes + 1)))) },
    { weight: 4, arbitrary: wireFrameArb.map((data) => /** @type {Ending} */ ({ kind: 'wire', data })) }
  )
}

/**
 * @param {string} s
 * @param {number[]} cuts
 * @returns {string[]} `s` cut at the given points (mod its length), in order; pieces may be empty
 */
function splitAt (s, cuts) {
  const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b)
  return [...at, s.length].map((end, i) => s.slice(i === 0 ? 0 : at[i - 1], end))
}

/**
 * One WebSocket frame on the wire (RFC 6455 §5.2) as a client would put it,
 * with any bits in its header: fin, the reserved bits, any opcode but close,
 * masked or not, its length in the short or a wider form, or a length far
 * past anything `ws` reads. This fuzzes `ws`'s frame parser under the
 * coordinator, which must survive every way a peer breaks the framing.
 */
export const wireFrameArb = fc.record({
  fin: fc.boolean(),
  rsv: fc.integer({ min: 0, max: 7 }),
  opcode: fc.constantFrom(0x0, 0x1, 0x2, 0x3, 0x7, 0x9, 0xa, 0xb, 0xf),
  masked: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  mask: fc.uint8Array({ minLength: 4, maxLength: 4 }),
  width: fc.constantFrom('short', 'wide', 'huge'),
  payload: fc.uint8Array({ maxLength: 300 })
}).map(encodeWireFrame)

/**
 * @param {{ fin: boolean, rsv: number, opcode: number, masked: boolean, mask: Uint8Array, width: 'short' | 'wide' | 'huge', payload: Uint8Array }} f
 * @returns {Uint8Array} the frame's bytes
 */
function encodeWireFrame ({ fin, rsv, opcode, masked, mask, width, payload }) {
  const head = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
  const m = masked ? 0x80 : 0
  if (width === 'huge') head.push(m | 127, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0) // a length no one sends: nothing follows
  else if (width === 'wide' || payload.length > 125) head.push(m | 126, payload.length >> 8, payload.length & 0xff)
  else head.push(m | payload.length)
  if (width === 'huge') return Uint8Array.from(head)
  const body = masked ? payload.map((b, i) => b ^ mask[i % 4]) : payload
  return Uint8Array.from([...head, ...(masked ? mask : []), ...body])
}

/**
 * A session of a fuzzing client.
 * @param {FuzzTargets} t
 * @param {{ maxFrames?: number }} [options]
 * @returns {fc.Arbitrary<FuzzSession>}
 */
export function sessionArb (t, { maxFrames = 80 } = {}) {
  return fc.record({
    join: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    frames: fc.array(frameArb(t), { minLength: 1, maxLength: maxFrames, size: 'max' }),
    end: fc.option(endingArb(t), { freq: 3, nil: null }),
    keep: fc.boolean()
  })
}

/** Message types a coordinator sends (docs/protocol.md, "coordinator → client"). */
export const REPLY_TYPES = Object.freeze(new Set(['welcome', 'updated', 'holders', 'relayed', 'connect', 'move', 'error']))

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
 * @property {number} problemCount replies or closes the protocol does not allow
 * @property {string[]} problems the first 50 of them, described
 */

/** @returns {FuzzTally} */
export function newTally () {
  return { frames: 0, sessions: 0, replies: 0, errorsByCode: {}, closesByCode: {}, problemCount: 0, problems: [] }
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
export class FrameFuzzer {
  /**
   * @param {string} url
   * @param {{ targets: FuzzTargets, tally: FuzzTally, perSecond?: number, repeat?: number }} options
   *   `perSecond`: frames a second at most (to stay under the rate limit);
   *   `repeat`: times each frame is sent (a flood, to be rate limited)
   */
  constructor (url, { targets, tally, perSecond = Infinity, repeat = 1 }) {
    this.url = url
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
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) {
      await this.gone
      const ws = this.ws = new WebSocket(this.url)
      this.joined = false
      ws.on('message', (data, isBinary) => this.check(String(data), isBinary))
      ws.on('error', () => {}) // a reset or a refused frame: the close that follows is what counts
      this.gone = new Promise((resolve) => ws.once('close', (code, reason) => {
        if (!this.mine.has(ws)) this.closed(code, String(reason))
        resolve()
      }))
      await once(ws, 'open')
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
