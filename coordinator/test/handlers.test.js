/**
 * The table of request types (handlers/index.js) and each type's `validate`,
 * called directly: every field that breaks the contract gets its code and the
 * exact message clients see (the wire contract, docs/protocol.md). What each
 * `handle` does is tested in handler-<type>.test.js.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ERRORS, LIMITS, REQUEST_TYPES } from '../../protocol/index.js'
import { HANDLERS, lateReply } from '../src/handlers/index.js'
import { validateMessage } from '../src/message-parser.js'
import { DEFAULTS } from '../src/config.js'
import { h, peerOn } from './handler-context.js'

const PEER = peerOn('here', 'a')
/** @param {number} levels @returns {object} an object nested `levels` deep */
const nested = (levels) => levels === 1 ? {} : { a: nested(levels - 1) }
const BYTES = 'an integer from 0 to 1099511627776'

test('every request type of the wire contract has exactly one handler, with its validator', () => {
  assert.deepEqual(Object.keys(HANDLERS).sort(), [...REQUEST_TYPES].sort())
  for (const type of REQUEST_TYPES) {
    assert.deepEqual(Object.keys(HANDLERS[type]), ['validate', 'handle', 'ordered'], type)
    assert.equal(typeof HANDLERS[type].validate, 'function', type)
    assert.equal(typeof HANDLERS[type].handle, 'function', type)
  }
  assert.deepEqual(REQUEST_TYPES.filter((type) => HANDLERS[type].ordered), ['join', 'update'], 'the types that change a peer\'s state')
})

/** @type {[string, Record<string, unknown>, keyof typeof ERRORS, string][]} type, fields, code, detail */
const REFUSED = [
  ['join', { have: 'x' }, 'MGH_ERR_BAD_FIELD', '"have" must be an array of SRI sha256 strings'],
  ['join', { have: [h('a'), 'sha256-short'] }, 'MGH_ERR_BAD_FIELD', '"have" must be an array of SRI sha256 strings'],
  ['join', { have: Array.from({ length: DEFAULTS.maxAssetsPerMessage + 1 }, (_, i) => h(String(i))) }, 'MGH_ERR_TOO_MANY_ASSETS', 'have names 1001 assets, at most 1000 per message'],
  ['join', { token: 5 }, 'MGH_ERR_BAD_FIELD', '"token" must be a string of at most 1024 characters'],
  ['join', { token: 'x'.repeat(1025) }, 'MGH_ERR_BAD_FIELD', '"token" must be a string of at most 1024 characters'],
  ['join', { visitor: 'short' }, 'MGH_ERR_BAD_FIELD', '"visitor" must be 16-64 of [A-Za-z0-9_-]'],
  ['update', { add: {} }, 'MGH_ERR_BAD_FIELD', '"add" must be an array of SRI sha256 strings'],
  ['update', { remove: [1] }, 'MGH_ERR_BAD_FIELD', '"remove" must be an array of SRI sha256 strings'],
  ['update', { remove: Array(1001).fill(h('a')) }, 'MGH_ERR_TOO_MANY_ASSETS', 'remove names 1001 assets, at most 1000 per message'],
  ['update', { serving: 'no' }, 'MGH_ERR_BAD_FIELD', '"serving" must be a boolean'],
  ['lookup', {}, 'MGH_ERR_BAD_FIELD', '"hash" must be an SRI sha256 string'],
  ['lookup', { hash: h('a'), hashes: [h('a')] }, 'MGH_ERR_BAD_FIELD', '"hashes" must be either hash or hashes, not both'],
  ['lookup', { hashes: [] }, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['lookup', { hashes: Array(LIMITS.maxLookupHashes + 1).fill(h('a')) }, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['lookup', { hash: h('a'), connected: 'x' }, 'MGH_ERR_BAD_FIELD', '"connected" must be an array of at most 64 peer ids'],
  ['lookup', { hash: h('a'), connected: Array(LIMITS.maxConnected + 1).fill(PEER) }, 'MGH_ERR_BAD_FIELD', '"connected" must be an array of at most 64 peer ids'],
  ['lookup', { hash: h('a'), connected: ['nope'] }, 'MGH_ERR_BAD_FIELD', '"connected" must be peer ids'],
  ['lookup', { hash: h('a'), offers: [{ cid: '' }] }, 'MGH_ERR_BAD_FIELD', '"offers" must be an array of at most 4 signals, each with a distinct "cid" (1 to 32 characters) and nested at most 8 deep'],
  ['lookup', { hash: h('a'), offers: [{ cid: 'x'.repeat(33) }] }, 'MGH_ERR_BAD_FIELD', '"offers" must be an array of at most 4 signals, each with a distinct "cid" (1 to 32 characters) and nested at most 8 deep'],
  ['lookup', { hash: h('a'), offers: [{ cid: 'a', sdp: nested(8) }] }, 'MGH_ERR_BAD_FIELD', '"offers" must be an array of at most 4 signals, each with a distinct "cid" (1 to 32 characters) and nested at most 8 deep'],
  ['lookup', { hash: h('a'), offers: Array.from({ length: 5 }, (_, i) => ({ cid: String(i) })) }, 'MGH_ERR_BAD_FIELD', '"offers" must be an array of at most 4 signals, each with a distinct "cid" (1 to 32 characters) and nested at most 8 deep'],
  ['lookup', { hash: h('a'), offers: [{ cid: 'a' }, { cid: 'a' }] }, 'MGH_ERR_BAD_FIELD', '"offers" must be each with a distinct "cid"'],
  ['held', {}, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['held', { hashes: [] }, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['held', { hashes: [h('a'), 'sha256-short'] }, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['held', { hashes: Array(LIMITS.maxLookupHashes + 1).fill(h('a')) }, 'MGH_ERR_BAD_FIELD', '"hashes" must be an array of 1 to 64 SRI sha256 strings'],
  ['connect', { to: 'nobody', signal: {} }, 'MGH_ERR_BAD_FIELD', '"to" must be a peer id'],
  ['connect', { to: PEER }, 'MGH_ERR_BAD_FIELD', '"signal" must be an object nested at most 8 deep'],
  ['connect', { to: PEER, signal: [] }, 'MGH_ERR_BAD_FIELD', '"signal" must be an object nested at most 8 deep'],
  ['connect', { to: PEER, signal: nested(9) }, 'MGH_ERR_BAD_FIELD', '"signal" must be an object nested at most 8 deep'],
  ['report', { peer: 'x', hash: h('a'), reason: 'miss' }, 'MGH_ERR_BAD_FIELD', '"peer" must be a peer id'],
  ['report', { peer: PEER, hash: 'x', reason: 'miss' }, 'MGH_ERR_BAD_FIELD', '"hash" must be an SRI sha256 string'],
  ['report', { peer: PEER, hash: h('a'), reason: 'rude' }, 'MGH_ERR_BAD_FIELD', '"reason" must be one of hash_mismatch, miss, no_channel, stall'],
  ['usage', { peer: -1 }, 'MGH_ERR_BAD_FIELD', `"peer" must be ${BYTES}`],
  ['usage', { served: 1.5 }, 'MGH_ERR_BAD_FIELD', `"served" must be ${BYTES}`],
  ['usage', { origin: 2 ** 41 }, 'MGH_ERR_BAD_FIELD', `"origin" must be ${BYTES}`],
  ['usage', { assets: {} }, 'MGH_ERR_BAD_FIELD', '"assets" must be an array of at most 64 [path, bytes] pairs'],
  ['usage', { assets: Array(LIMITS.maxUsageAssets + 1).fill(['/a', 1]) }, 'MGH_ERR_BAD_FIELD', '"assets" must be an array of at most 64 [path, bytes] pairs'],
  ['usage', { assets: [['img.png', 5]] }, 'MGH_ERR_BAD_FIELD', `"assets" must be [path, bytes] pairs: a path starting with / of at most 512 characters, ${BYTES}`],
  ['usage', { assets: [['/a', 5, 6]] }, 'MGH_ERR_BAD_FIELD', `"assets" must be [path, bytes] pairs: a path starting with / of at most 512 characters, ${BYTES}`],
  ['usage', { assets: [['/' + 'a'.repeat(512), 5]] }, 'MGH_ERR_BAD_FIELD', `"assets" must be [path, bytes] pairs: a path starting with / of at most 512 characters, ${BYTES}`],
  ['usage', { id: 7 }, 'MGH_ERR_BAD_FIELD', '"id" must be 1 to 32 letters, digits, _ or -'],
  ['usage', { id: '' }, 'MGH_ERR_BAD_FIELD', '"id" must be 1 to 32 letters, digits, _ or -'],
  ['usage', { id: 'a b' }, 'MGH_ERR_BAD_FIELD', '"id" must be 1 to 32 letters, digits, _ or -'],
  ['usage', { id: 'a'.repeat(33) }, 'MGH_ERR_BAD_FIELD', '"id" must be 1 to 32 letters, digits, _ or -']
]

test('each type\'s validate refuses every field that breaks the contract with its code and message', () => {
  for (const [type, fields, code, detail] of REFUSED) {
    const expected = { code, message: `${ERRORS[code].message}: ${detail}` }
    assert.throws(() => HANDLERS[type].validate({ type, ...fields }, DEFAULTS), expected, `${type} ${JSON.stringify(fields).slice(0, 80)}`)
    // The same through the envelope: message-parser.js calls it.
    assert.throws(() => validateMessage({ type, ref: 1, ...fields }, DEFAULTS), expected)
  }
})

test('each type\'s validate takes what the contract allows, at its bounds', () => {
  /** @type {[string, Record<string, unknown>][]} */
  const valid = [
    ['join', {}],
    ['join', { have: Array(DEFAULTS.maxAssetsPerMessage).fill(h('a')), token: 'x'.repeat(1024), visitor: 'v'.repeat(16) }],
    ['update', { add: [], remove: [h('a')], serving: false }],
    ['lookup', { hash: h('a'), connected: [], offers: [] }],
    ['lookup', { hashes: Array(LIMITS.maxLookupHashes).fill(h('a')), connected: Array(LIMITS.maxConnected).fill(PEER) }],
    ['lookup', { hash: h('a'), offers: [{ cid: 'x'.repeat(32), sdp: nested(7) }, { cid: 'b' }] }],
    ['held', { hashes: Array(LIMITS.maxLookupHashes).fill(h('a')) }],
    ['connect', { to: PEER, signal: nested(8) }],
    ['report', { peer: PEER, hash: h('a'), reason: 'stall' }],
    ['usage', {}],
    ['usage', { peer: 0, origin: 2 ** 40, cache: 1, served: 2, assets: [['/' + 'a'.repeat(511), 0]] }]
  ]
  for (const [type, fields] of valid) {
    assert.doesNotThrow(() => HANDLERS[type].validate({ type, ...fields }, DEFAULTS), `${type} ${JSON.stringify(fields).slice(0, 80)}`)
  }
})

test('a request the store let run out of time: a lookup answers no holders, anything else an error', () => {
  assert.deepEqual(lateReply({ type: 'lookup', hash: h('a') }), { type: 'holders', hash: h('a'), peers: [] })
  assert.deepEqual(lateReply({ type: 'lookup', hashes: [h('a'), h('b')] }), { type: 'holders', found: { [h('a')]: [], [h('b')]: [] } })
  for (const type of REQUEST_TYPES.filter((t) => t !== 'lookup')) assert.equal(lateReply({ type }), null)
})
