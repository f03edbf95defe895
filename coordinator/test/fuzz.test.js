/**
 * Property-based fuzzing of the coordinator, the quick run inside `npm test`
 * (bench/fuzz-coordinator.js is the long one, on two shards and Redis).
 *
 * First the parser alone: arbitrary bytes, arbitrary JSON and mutated
 * messages either parse to a request or throw a MayghError with a registered
 * code, and valid messages parse to themselves. Then a real coordinator over
 * real sockets: a fuzzing client sends thousands of generated frames (before
 * and after joining, text, binary, fragmented, oversized, raw frames that
 * break the WebSocket framing) while a well-behaved pair of peers checks it is
 * served exactly, throughout and after. Seeded (MAYGH_FUZZ_SEED overrides the
 * fixed default), so a failure reproduces.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import fc from 'fast-check'
import { ERRORS, LIMITS as DEFAULT_LIMITS, MayghError, REQUEST_TYPES } from '../../protocol/index.js'
import { parseMessage, validateMessage } from '../src/message-parser.js'
import { startCoordinator } from '../src/server.js'
import { endingArb, frameArb, fuzzSeed, hashArb, mutatedMessageArb, sessionArb, validMessageArb } from '../../test/support/fuzz-arbitraries.js'
import { CLOSE_CODES, FrameFuzzer, WellBehavedPair, newTally } from '../../test/support/fuzz-clients.js'
import { sample } from './store-contract.js'

const SEED = fuzzSeed()
const REPRODUCE = `(seed ${SEED}: MAYGH_FUZZ_SEED=${SEED} reproduces)`
/** fast-check's parameters for every property here: the seed, and the failure's own message in the report */
const RUN = Object.freeze({ seed: SEED, includeErrorInReport: true })
/**
 * The default maxMessageBytes (room for the deepest nesting a real frame can
 * carry), a hard limit not much above it, and few assets per message, so that
 * oversized frames and asset lists are cheap to send.
 */
const LIMITS = Object.freeze({ maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, hardMaxMessageBytes: 2 * DEFAULT_LIMITS.maxMessageBytes, maxAssetsPerMessage: 8 })

/**
 * `arb`'s values, printed in a failure report by `show` (fast-check
 * would print a 60 KB frame in full, and overflow on a deeply nested value).
 * @template T
 * @param {fc.Arbitrary<T>} arb
 * @param {(value: T) => string} show
 * @returns {fc.Arbitrary<{ value: T }>}
 */
function printable (arb, show) {
  return arb.map((value) => ({ value, [fc.toStringMethod]: () => show(value) }))
}

/** @param {string} text @returns {string} `text`, its middle cut out when long */
function abbreviate (text) {
  return text.length <= 400 ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, 200))} … ${text.length - 300} characters … ${JSON.stringify(text.slice(-100))}`
}

/** @param {import('../../test/support/fuzz-arbitraries.js').Ending} frame @returns {string} */
function describeFrame (frame) {
  if (frame.kind === 'wire') return `raw ${Buffer.from(frame.data).toString('hex')}`
  const data = frame.kind === 'text' ? frame.data : frame.kind === 'fragments' ? frame.data.join('') : Buffer.from(frame.data).toString('latin1')
  return `${frame.kind}${frame.kind === 'bytes' ? (frame.binary ? ' (binary)' : ' (text)') : ''} ${abbreviate(data)}`
}

/** @returns {import('../../test/support/fuzz-arbitraries.js').FuzzTargets} fixed targets for the parser properties */
function parserTargets () {
  return { limits: LIMITS, hashes: fc.sample(hashArb, { numRuns: 3, seed: SEED }), peers: ['a~AAAAAAAAAAAAAAAAAAAAAA', 'b.c~BBBBBBBBBBBBBBBBBBBBBB'] }
}

/**
 * What parsing may do: return a request of a known type, or throw a
 * MayghError whose code is in the registry. Anything else fails the property.
 * @param {() => { type: string }} parse
 * @returns {string} the type parsed or the code thrown
 */
function outcome (parse) {
  let message
  try {
    message = parse()
  } catch (err) {
    assert.ok(err instanceof MayghError, `threw ${err?.name}: ${String(err?.message).slice(0, 200)}, not a MayghError`)
    assert.ok(Object.hasOwn(ERRORS, err.code), `threw code ${err.code}, which is not in ERRORS`)
    return err.code
  }
  assert.ok(REQUEST_TYPES.includes(/** @type {any} */ (message.type)), `parsed a message of type ${message.type}`)
  return message.type
}

/**
 * @param {import('../../test/support/fuzz-arbitraries.js').Frame} frame
 * @returns {[Buffer, boolean]} the payload `ws` hands the coordinator, and whether it is binary
 */
function payloadOf (frame) {
  if (frame.kind === 'text') return [Buffer.from(frame.data), false]
  if (frame.kind === 'fragments') return [Buffer.from(frame.data.join('')), false]
  return [Buffer.from(frame.data), frame.binary]
}

/**
 * @param {Map<string, number>} seen outcomes counted over a property's runs
 * @param {string[]} expected outcomes the generators must have reached
 */
function assertReached (seen, expected) {
  for (const what of expected) assert.ok(seen.has(what), `no run reached ${what}; reached ${[...seen.keys()].join(', ')} ${REPRODUCE}`)
}

describe(`message parser under fuzzing ${REPRODUCE}`, () => {
  const targets = parserTargets()

  test('any frame (session endings too) parses to a request or throws a coded MayghError', () => {
    /** @type {Map<string, number>} */
    const seen = new Map()
    /** @type {fc.Arbitrary<import('../../test/support/fuzz-arbitraries.js').Frame>} */
    const frames = fc.oneof(frameArb(targets), endingArb(targets).filter((e) => e.kind !== 'wire').map((e) => /** @type {import('../../test/support/fuzz-arbitraries.js').Frame} */ (e)))
    fc.assert(fc.property(printable(frames, (f) => describeFrame(f)), ({ value: frame }) => {
      const [data, isBinary] = payloadOf(frame)
      const what = outcome(() => parseMessage(data, isBinary, LIMITS))
      seen.set(what, (seen.get(what) ?? 0) + 1)
    }), { ...RUN, numRuns: 4000 })
    assertReached(seen, [...REQUEST_TYPES, 'MGH_ERR_BAD_JSON', 'MGH_ERR_BAD_MESSAGE', 'MGH_ERR_BAD_VERSION', 'MGH_ERR_UNKNOWN_TYPE', 'MGH_ERR_BAD_FIELD', 'MGH_ERR_TOO_LARGE', 'MGH_ERR_TOO_MANY_ASSETS'])
  })

  test('a valid message parses to itself (or is too large), with or without v and ref', () => {
    fc.assert(fc.property(validMessageArb(targets), (message) => {
      const text = JSON.stringify(message)
      if (Buffer.byteLength(text) > LIMITS.maxMessageBytes) assert.equal(outcome(() => parseMessage(Buffer.from(text), false, LIMITS)), 'MGH_ERR_TOO_LARGE')
      // compared as JSON: fast-check may make objects without a prototype
      else assert.deepEqual(parseMessage(Buffer.from(text), false, LIMITS), JSON.parse(text))
    }), { ...RUN, numRuns: 1000 })
  })

  test('validateMessage on any JSON value, and on decoded mutations of valid messages, returns a request or throws a coded MayghError', () => {
    /** @type {Map<string, number>} */
    const seen = new Map()
    // Generated as text and decoded in the property, so a counterexample prints as text.
    const texts = fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), mutatedMessageArb(targets))
    fc.assert(fc.property(printable(texts, abbreviate), ({ value: text }) => {
      const what = outcome(() => validateMessage(JSON.parse(text), LIMITS))
      seen.set(what, (seen.get(what) ?? 0) + 1)
    }), { ...RUN, numRuns: 4000 })
    assertReached(seen, [...REQUEST_TYPES, 'MGH_ERR_BAD_MESSAGE', 'MGH_ERR_BAD_VERSION', 'MGH_ERR_UNKNOWN_TYPE', 'MGH_ERR_BAD_FIELD', 'MGH_ERR_TOO_MANY_ASSETS'])
  })

  test('what fuzzing found: a `v` nested deeper than JSON.stringify recurses is a version error, not a store failure', () => {
    const frame = Buffer.from(`{"type":"join","v":${'['.repeat(5000)}${']'.repeat(5000)},"ref":7}`)
    assert.throws(() => parseMessage(frame, false, LIMITS), { code: 'MGH_ERR_BAD_VERSION', message: /got an array/, ref: 7 })
  })
})

/**
 * Resolves once every socket the coordinator had has closed and its peer's
 * removal (queued behind the peer's other changes) has run.
 * @param {import('../src/server.js').Coordinator} coordinator
 */
async function everyoneGone (coordinator) {
  for (const session of new Set([...coordinator.connections, ...coordinator.sessions.values()])) {
    if (!session.closed) await once(session.ws, 'close')
    await session.queue
  }
}

describe(`coordinator under fuzzing over real sockets ${REPRODUCE}`, () => {
  /** @type {import('../src/server.js').Coordinator} */
  let coordinator
  /** @type {unknown[]} unhandled rejections and uncaught exceptions while the coordinator ran */
  const escaped = []
  /** @type {unknown[]} what the coordinator replied MGH_ERR_STORE for that was no MayghError (a bug, not a store failure) */
  const internal = []
  const record = (/** @type {unknown} */ err) => { escaped.push(err) }

  before(async () => {
    process.on('unhandledRejection', record)
    process.on('uncaughtException', record)
    coordinator = await startCoordinator({
      port: 0,
      stunPort: -1,
      iceServers: [{ urls: 'stun:127.0.0.1:3478' }],
      rateLimitPerSecond: 1_000_000,
      rateLimitBurst: 1_000_000,
      // The well-behaved pair meets a new holder every round, hundreds a second from one address:
      // the bound on new holders (rightly) stops that pattern, as it stops a harvester.
      newHolderBurst: 0,
      maxAssetsPerPeer: 64,
      ...LIMITS
    })
    coordinator.on('warning', (err, context) => {
      if (String(context).startsWith('replied') && !(err instanceof MayghError)) internal.push(err)
    })
  })
  after(async () => {
    await coordinator.close()
    process.off('unhandledRejection', record)
    process.off('uncaughtException', record)
  })

  test('every reply is a coordinator message, every error coded, every close a documented code; well-behaved peers are served throughout and after; nothing is left once all have gone', async (t) => {
    /** @type {import('../../test/support/fuzz-arbitraries.js').FuzzTargets} */
    const targets = { limits: LIMITS, hashes: [], peers: [] }
    const pair = new WellBehavedPair({ urls: [coordinator.url, coordinator.url], targets })
    await pair.start()
    let fuzzing = true
    const during = pair.runUntil(() => !fuzzing)
    const tally = newTally()
    const fuzzer = new FrameFuzzer(coordinator.url, { targets, tally })
    try {
      const describeSession = (/** @type {import('../../test/support/fuzz-arbitraries.js').FuzzSession} */ s) =>
        `${s.join ? 'join, then ' : ''}${[...s.frames, ...(s.end ? [s.end] : [])].map(describeFrame).join(',\n  ')}`
      await fc.assert(fc.asyncProperty(printable(sessionArb(targets), describeSession), async ({ value: session }) => {
        const [problems, internals, escapes] = [tally.problemCount, internal.length, escaped.length]
        await fuzzer.run(session)
        await new Promise((resolve) => setImmediate(resolve)) // for an unhandled rejection to be reported
        assert.equal(tally.problemCount, problems, tally.problems.slice(problems).join('\n'))
        assert.equal(escaped.length, escapes, `unhandled: ${/** @type {Error} */ (escaped[escapes])?.stack}`)
        assert.equal(internal.length, internals, `a reply of MGH_ERR_STORE hid an internal error: ${/** @type {Error} */ (internal[internals])?.stack}`)
      }), { ...RUN, numRuns: 120 })
    } finally {
      fuzzing = false
      await during
      await fuzzer.close()
    }
    const roundsDuring = pair.stats.rounds
    await pair.runUntil(() => pair.stats.rounds >= roundsDuring + 5)
    await pair.close()
    await everyoneGone(coordinator)
    t.diagnostic(`${tally.frames} frames in ${tally.sessions} sessions; errors ${JSON.stringify(tally.errorsByCode)}; closes ${JSON.stringify(tally.closesByCode)}; well-behaved: ${JSON.stringify(pair.stats)}`)

    assert.equal(escaped.length, 0, `unhandled rejections or uncaught exceptions, the first: ${/** @type {Error} */ (escaped[0])?.stack} ${REPRODUCE}`)
    assert.deepEqual(pair.stats.failed, [], `the well-behaved peers were not served exactly ${REPRODUCE}`)
    assert.equal(pair.stats.failures, 0)
    assert.ok(roundsDuring > 0, 'the well-behaved peers played rounds while the fuzzing went on')
    assert.ok(tally.frames >= 2000, `only ${tally.frames} frames sent`)
    for (const code of Object.keys(tally.closesByCode)) assert.ok(CLOSE_CODES.has(Number(code)), `closed with ${code}`)
    // not a test that cannot fail: the frames reached the parser's errors, the handlers' and ws's closes
    for (const code of ['MGH_ERR_BAD_JSON', 'MGH_ERR_BAD_FIELD', 'MGH_ERR_UNKNOWN_TYPE', 'MGH_ERR_BAD_VERSION', 'MGH_ERR_TOO_LARGE', 'MGH_ERR_NOT_JOINED', 'MGH_ERR_ALREADY_JOINED']) {
      assert.ok(tally.errorsByCode[code] > 0, `no frame was answered ${code}: ${JSON.stringify(tally.errorsByCode)}`)
    }
    for (const code of [1002, 1007, 1009]) assert.ok(tally.closesByCode[code] > 0, `no socket was closed with ${code}: ${JSON.stringify(tally.closesByCode)}`)
    // once everyone has left, nothing of them is left: no peer, no holding counted, no holder listed
    assert.equal(coordinator.sessions.size, 0)
    assert.equal(coordinator.holdings, 0, 'holdings counted for peers that have left')
    for (const hash of targets.hashes) assert.deepEqual(await sample(coordinator.store, hash, 1000), [], 'a holder listed after every peer left')
  })
})
