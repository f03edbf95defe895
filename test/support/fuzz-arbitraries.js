/**
 * What the coordinator is fuzzed with, shared by the quick property test
 * (coordinator/test/fuzz.test.js) and the long run (bench/fuzz-coordinator.js):
 * the seed, and fast-check arbitraries for valid client messages, for
 * mutations of them (a field removed, retyped, nested deep, oversized, a wrong
 * `v` or `ref`, the text cut or its bytes flipped), for WebSocket frames of
 * every kind, for raw frames that break the WebSocket framing itself, and for
 * whole sessions of a fuzzing client (the seed also drives the client's peer
 * protocol fuzzing, client/test/peer-protocol-fuzz.test.js). The clients that
 * send them, and check what comes back, are in test/support/fuzz-clients.js.
 */
import fc from 'fast-check'
import { LIMITS, PROTOCOL_VERSIONS, REPORT_REASONS, REQUEST_TYPES, USAGE_SOURCES } from '../../protocol/index.js'

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
    update: fc.record({ add: list, remove: list, serving: fc.boolean() }, { requiredKeys: [] }),
    lookup: fc.oneof(
      fc.record({ hash: assetArb(t), connected: fc.array(peerIdArb(t), { maxLength: 4 }) }, { requiredKeys: ['hash'] }),
      fc.record({
        hashes: fc.array(assetArb(t), { minLength: 1, maxLength: 8 }),
        connected: fc.array(peerIdArb(t), { maxLength: 4 }),
        // protocol 3: offers the coordinator hands to holders it names
        offers: fc.uniqueArray(fc.record({ cid: fc.string({ minLength: 1, maxLength: 10 }), sdp: fc.record({ type: fc.constant('offer'), sdp: fc.string({ maxLength: 80 }) }) }), { maxLength: LIMITS.maxLookupOffers, selector: (o) => o.cid })
      }, { requiredKeys: ['hashes'] })
    ),
    // protocol 5: which of some assets any visitor holds
    held: fc.record({ hashes: fc.array(assetArb(t), { minLength: 1, maxLength: 8 }) }),
    connect: fc.record({ to: peerIdArb(t), signal: signalArb }),
    report: fc.record({ peer: peerIdArb(t), hash: assetArb(t), reason: fc.constantFrom(...REPORT_REASONS) }),
    usage: fc.record({
      ...Object.fromEntries(USAGE_SOURCES.map((s) => [s, fc.nat()])),
      assets: fc.array(fc.tuple(fc.string({ maxLength: 20 }).map((p) => '/' + p), fc.nat()), { maxLength: 4 })
    }, { requiredKeys: [] })
  }
  const envelope = fc.record({ v: fc.constantFrom(...PROTOCOL_VERSIONS), ref: fc.nat() }, { requiredKeys: [] })
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
    fc.tuple(hashArb, strangerIdArb).map(([hash, id]) => (m, k) => text({ ...m, [k]: Array(k === 'connected' ? 65 : k === 'hashes' ? LIMITS.maxLookupHashes + 1 : t.limits.maxAssetsPerMessage + 1).fill(k === 'connected' ? id : hash) })),
    fc.oneof(fc.constantFrom(...STRANGE_TYPES), fc.string({ maxLength: 80 })).map((type) => (m) => text({ ...m, type })),
    fc.jsonValue({ maxDepth: 2 }).filter((v) => !PROTOCOL_VERSIONS.includes(/** @type {any} */ (v))).map((v) => (m) => text({ ...m, v })),
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
