import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { sriOf, matches, sha256FromIntegrity, isSri } from '../index.js'
import { sriHash } from '../../client/manifest.js'

test('sriOf (WebCrypto) names bytes exactly as the manifest builder (node:crypto) does', async () => {
  for (const n of [0, 1, 55, 64, 16384, 100_000]) {
    const bytes = new Uint8Array(randomBytes(n))
    const name = await sriOf(bytes)
    assert.equal(name, sriHash(bytes))
    assert.ok(isSri(name))
    assert.ok(await matches(bytes, name))
  }
})

test('one flipped bit changes the name', async () => {
  const bytes = new Uint8Array(randomBytes(1000))
  const name = await sriOf(bytes)
  bytes[500] ^= 1
  assert.equal(await matches(bytes, name), false)
})

test('sha256FromIntegrity picks the SHA-256 entry of an integrity attribute', () => {
  const h = 'sha256-' + 'A'.repeat(43) + '='
  assert.equal(sha256FromIntegrity(h), h)
  assert.equal(sha256FromIntegrity(`sha384-abc  ${h}?ct=image/png`), h)
  assert.equal(sha256FromIntegrity('sha512-xyz'), null)
  assert.equal(sha256FromIntegrity('sha256-tooShort='), null)
  assert.equal(sha256FromIntegrity(null), null)
  assert.equal(isSri(42), false)
})
