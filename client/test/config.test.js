import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readConfig, DEFAULTS } from '../src/config.js'
import { backoffDelay } from '../src/backoff.js'

test('defaults: 50 MB quota, manifest at /maygh-manifest.json, no coordinator', () => {
  const c = readConfig({})
  assert.equal(c.quotaMb, 50)
  assert.equal(c.manifest, '/maygh-manifest.json')
  assert.equal(c.coordinator, '')
  assert.ok(Object.isFrozen(c))
  assert.deepEqual(c, DEFAULTS)
})

test('data attributes override; out-of-range values are clamped with a warning, junk ignored', () => {
  const warnings = []
  const c = readConfig({ coordinator: 'ws://x', quotaMb: '900', stallMs: 'soon', lookupTimeoutMs: '750' }, (m) => warnings.push(m))
  assert.equal(c.coordinator, 'ws://x')
  assert.equal(c.quotaMb, 500, 'the maximum quota is 500 MB')
  assert.equal(c.stallMs, DEFAULTS.stallMs)
  assert.equal(c.lookupTimeoutMs, 750)
  assert.equal(warnings.length, 2)
  assert.equal(readConfig({ quotaMb: '0' }).quotaMb, 1)
})

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
