import { test } from 'node:test'
import assert from 'node:assert/strict'
import { backoffDelay } from '../index.js'

test('reconnect backoff doubles up to the cap, with jitter in the upper half of each step', () => {
  const limits = { baseMs: 500, maxMs: 30000 }
  assert.equal(backoffDelay(0, limits, () => 0), 250)
  assert.equal(backoffDelay(0, limits, () => 1), 500)
  assert.equal(backoffDelay(3, limits, () => 1), 4000)
  assert.equal(backoffDelay(20, limits, () => 1), 30000)
  assert.equal(backoffDelay(1000, limits, () => 0), 15000)
  for (let i = 0; i < 100; i++) {
    const d = backoffDelay(4, limits)
    assert.ok(d >= 4000 && d <= 8000)
  }
})
