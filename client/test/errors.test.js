import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { CODES, codedError } from '../src/errors.js'

test('every client error code is documented in README.md', async () => {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
  for (const code of Object.keys(CODES)) assert.ok(readme.includes(`\`${code}\``), `${code} missing from README.md`)
})

test('codedError carries the code and the detail', () => {
  const err = codedError('MGH_ERR_STALL', 'peer p1')
  assert.equal(err.code, 'MGH_ERR_STALL')
  assert.equal(err.message, 'peer sent no bytes for too long: peer p1')
})
