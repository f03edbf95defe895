import { test } from 'node:test'
import assert from 'node:assert/strict'
import { REQUEST_TYPES } from '../../protocol/index.js'
import { HANDLERS } from '../src/handlers/index.js'

test('every request type of the wire contract has exactly one handler', () => {
  assert.deepEqual(Object.keys(HANDLERS).sort(), [...REQUEST_TYPES].sort())
})
