import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readConfig, coordinatorUrls, DEFAULTS } from '../src/config.js'
import { DEFAULT_QUOTA_BYTES } from '../../protocol/index.js'

test('defaults: 50 MB quota, manifest at /maygh-manifest.json, no coordinator', () => {
  const c = readConfig({})
  assert.equal(c.quotaMb, 50)
  assert.equal(c.quotaMb * 2 ** 20, DEFAULT_QUOTA_BYTES)
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

test('data-coordinator may list several URLs, separated by commas or whitespace', () => {
  assert.deepEqual(coordinatorUrls('wss://a.example'), ['wss://a.example'])
  assert.deepEqual(coordinatorUrls(' wss://a.example, wss://b.example\n\t/ws ,'), ['wss://a.example', 'wss://b.example', '/ws'])
  assert.deepEqual(coordinatorUrls(' , '), [])
  assert.equal(readConfig({ coordinator: 'wss://a.example wss://b.example' }).coordinator, 'wss://a.example wss://b.example')
})
