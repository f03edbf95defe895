import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readConfig, coordinatorUrls, DEFAULTS } from '../src/config.js'
import { BUDGET_DEFAULTS } from '../../policy/budgets.js'
import { HEDGE_DEFAULTS } from '../../policy/hedge-rule.js'

test('defaults: 50 MB quota, manifest at /maygh-manifest.json, no coordinator', () => {
  const c = readConfig({})
  assert.equal(c.quotaMb, 50)
  assert.equal(c.manifest, '/maygh-manifest.json')
  assert.equal(c.coordinator, '')
  assert.ok(Object.isFrozen(c))
  assert.deepEqual(c, DEFAULTS)
})

test('the defaults the simulator replays are the shared rules\' (policy/): budgets and the hedge\'s settings', () => {
  for (const shared of [BUDGET_DEFAULTS, HEDGE_DEFAULTS]) {
    for (const [key, value] of Object.entries(shared)) assert.equal(/** @type {any} */ (DEFAULTS)[key], value, key)
  }
})

test('data-hedge: balanced by default; a known preference is taken, anything else is warned about and ignored', () => {
  assert.equal(DEFAULTS.hedge, 'balanced')
  assert.equal(readConfig({ hedge: 'savings' }).hedge, 'savings')
  /** @type {string[]} */
  const warned = []
  assert.equal(readConfig({ hedge: 'fastest' }, (m) => warned.push(m)).hedge, 'balanced')
  assert.match(warned[0], /data-hedge=fastest/)
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
