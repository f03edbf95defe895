/**
 * fields.js's fast name checks against the contract's patterns (protocol/):
 * isAssetName is SRI_PATTERN's test and isPeerId is PEER_ID_PATTERN's, for
 * any value, and above all for strings a character away from a valid name.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { PEER_ID_PATTERN, SRI_PATTERN } from '../../protocol/index.js'
import { isAssetName, isPeerId } from '../src/fields.js'

const RUNS = { numRuns: 5000, seed: 25 }
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const BASE64URL = BASE64.slice(0, 62) + '-_'

/** Characters a name holds, and the ones around its classes' edges (and beyond ASCII). */
const nearChar = fc.constantFrom(...BASE64, '-', '_', '.', '~', '=', ' ', '\n', '@', '[', '`', '{', ':', '\u00e9', '\u0130', '\ud83d', '\u212a')
/** @param {number} min @param {number} max */
const nearString = (min, max) => fc.array(nearChar, { minLength: min, maxLength: max }).map((cs) => cs.join(''))

/**
 * A valid name with one character replaced, inserted or removed, or left alone.
 * @param {fc.Arbitrary<string>} valid
 */
const mutated = (valid) => fc.tuple(valid, fc.nat(), nearChar, fc.constantFrom('replace', 'insert', 'remove', 'keep')).map(([s, at, c, how]) => {
  const i = at % (s.length + 1)
  if (how === 'replace') return s.slice(0, i) + c + s.slice(i + 1)
  if (how === 'insert') return s.slice(0, i) + c + s.slice(i)
  if (how === 'remove') return s.slice(0, i) + s.slice(i + 1)
  return s
})

const validSri = fc.array(fc.constantFrom(...BASE64), { minLength: 43, maxLength: 43 }).map((cs) => `sha256-${cs.join('')}=`)
const validPeerId = fc.tuple(
  fc.array(fc.constantFrom(...BASE64URL.replace('-', ''), '-', '.'), { minLength: 1, maxLength: 64 }),
  fc.array(fc.constantFrom(...BASE64URL), { minLength: 22, maxLength: 22 })
).map(([shard, tail]) => `${shard.join('')}~${tail.join('')}`)

test('isAssetName agrees with SRI_PATTERN', () => {
  const any = fc.oneof(validSri, mutated(validSri), nearString(45, 55), fc.string(), fc.anything())
  fc.assert(fc.property(any, (value) => {
    assert.equal(isAssetName(value), typeof value === 'string' && SRI_PATTERN.test(value), JSON.stringify(value))
  }), RUNS)
  assert.equal(isAssetName('sha256-' + 'A'.repeat(43) + '='), true)
})

test('isPeerId agrees with PEER_ID_PATTERN', () => {
  const any = fc.oneof(validPeerId, mutated(validPeerId), nearString(20, 90), fc.string(), fc.anything())
  fc.assert(fc.property(any, (value) => {
    assert.equal(isPeerId(value), typeof value === 'string' && PEER_ID_PATTERN.test(value), JSON.stringify(value))
  }), RUNS)
  for (const id of ['a~' + 'b'.repeat(22), 'x'.repeat(64) + '~' + '-'.repeat(22)]) assert.equal(isPeerId(id), true, id)
  for (const id of ['~' + 'b'.repeat(22), 'x'.repeat(65) + '~' + 'b'.repeat(22), 'a~' + 'b'.repeat(21), 'a~b~' + 'b'.repeat(22)]) assert.equal(isPeerId(id), false, id)
})
