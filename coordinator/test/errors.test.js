import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { ERRORS, MayghError } from '../src/errors.js'
import { MESSAGE_TYPES } from '../src/protocol.js'
import { HANDLERS } from '../src/handlers/index.js'

test('every error code is documented in README.md', async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
  for (const code of Object.keys(ERRORS)) assert.ok(readme.includes(`\`${code}\``), `${code} missing from README.md`)
})

test('registry entries are consistent and MayghError refuses unknown codes', () => {
  for (const [key, spec] of Object.entries(ERRORS)) {
    assert.equal(spec.code, key)
    assert.ok(spec.message.length > 0)
  }
  const err = new MayghError('MGH_ERR_BAD_FIELD', '"x" must be y')
  assert.equal(err.code, 'MGH_ERR_BAD_FIELD')
  assert.match(err.message, /: "x" must be y$/)
  assert.throws(() => new MayghError(/** @type {any} */ ('NOPE')), TypeError)
})

test('every message type the parser accepts has exactly one handler', () => {
  assert.deepEqual([...MESSAGE_TYPES].sort(), Object.keys(HANDLERS).sort())
})
