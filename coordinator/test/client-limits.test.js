import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ClientLimits, MAX_KEPT } from '../src/client-limits.js'

const config = { rateLimitPerSecond: 10, rateLimitBurst: 5, rateLimitCloseAfter: 20, maxConnectionsPerIp: 2, limitsByAddress: true }
/** no new-holder bound (config has none) */
const H = { holders: 0, holdersAt: 0 }

test('a closed socket\'s limit is kept only while it is not as good as new, the worse of two kept, and at most MAX_KEPT', () => {
  let now = 0
  const limits = new ClientLimits(config, () => now)
  const own = { tokens: 5, refilledAt: 0, dropped: 0, lastDropAt: -Infinity, ...H }
  limits.keep(own, limits.keysOf('10.0.0.1', ''))
  assert.equal(limits.kept.size, 0, 'a full bucket is not kept')
  limits.keep({ tokens: 1, refilledAt: 0, dropped: 0, lastDropAt: -Infinity, ...H }, limits.keysOf('10.0.0.1', 'v'))
  assert.deepEqual([...limits.kept.keys()], ['a:10.0.0.1', 'v:v'])
  // A second socket of the address left more: the fewer tokens stay; its drop episode is the later one.
  limits.keep({ tokens: 3, refilledAt: 0, dropped: 7, lastDropAt: 0, ...H }, limits.keysOf('10.0.0.1', ''))
  now = 100 // one token refilled
  assert.deepEqual(limits.carried(own, limits.keysOf('10.0.0.1', '')), { tokens: 1, refilledAt: 0, dropped: 7, lastDropAt: 0, ...H })
  // By the visitor's key from another address too.
  assert.equal(limits.carried(own, limits.keysOf('10.0.0.9', 'v'))?.tokens, 1)
  assert.equal(limits.carried(own, limits.keysOf('10.0.0.9', '')), undefined)
  // Refilled and out of its episode: forgotten as it is asked for.
  now = 1500
  assert.equal(limits.carried(own, limits.keysOf('10.0.0.1', 'v')), undefined)
  assert.equal(limits.kept.size, 0)
  for (let i = 0; i < MAX_KEPT + 10; i++) limits.keep({ tokens: 0, refilledAt: now, dropped: 0, lastDropAt: -Infinity, ...H }, [`a:${i}`])
  assert.equal(limits.kept.size, MAX_KEPT)
  assert.equal(limits.kept.has('a:0'), false, 'the oldest went first')
})

test('a socket\'s new-holder allowance is carried to its client\'s next socket like its rate limit, refilled meanwhile', () => {
  let now = 0
  const limits = new ClientLimits({ ...config, newHolderBurst: 4, newHoldersPerSecond: 1 }, () => now)
  const full = { tokens: 5, refilledAt: 0, dropped: 0, lastDropAt: -Infinity, holders: 4, holdersAt: 0 }
  limits.keep(full, limits.keysOf('10.0.0.1', ''))
  assert.equal(limits.kept.size, 0, 'as good as new: not kept')
  limits.keep({ ...full, holders: 0 }, limits.keysOf('10.0.0.1', ''))
  now = 2000
  assert.deepEqual(limits.carried({ ...full, refilledAt: now, holdersAt: now }, limits.keysOf('10.0.0.1', '')), { ...full, refilledAt: now, holders: 2, holdersAt: now })
  now = 4000
  assert.equal(limits.carried(full, limits.keysOf('10.0.0.1', '')), undefined, 'refilled: forgotten')
})

test('TCP connections are counted per address against maxConnectionsPerIp (0: no limit)', () => {
  const limits = new ClientLimits(config, () => 0)
  assert.deepEqual([limits.connected('a'), limits.connected('a'), limits.connected('a'), limits.connected('b')], [true, true, false, true])
  limits.disconnected('a')
  limits.disconnected('a')
  assert.equal(limits.connected('a'), true)
  limits.disconnected('a')
  limits.disconnected('a')
  limits.disconnected('b')
  assert.equal(limits.open.size, 0)
  const open = new ClientLimits({ ...config, maxConnectionsPerIp: 0 }, () => 0)
  for (let i = 0; i < 10; i++) assert.equal(open.connected('a'), true)
})

test('an address whose client was cut off for flooding is barred until it has been quiet for a second; each attempt meanwhile counts', () => {
  let now = 0
  const limits = new ClientLimits(config, () => now)
  limits.keep({ tokens: 0, refilledAt: 0, dropped: 19, lastDropAt: 0, ...H }, limits.keysOf('10.0.0.1', ''))
  assert.equal(limits.barred('10.0.0.1'), false, 'closed before the cut-off: let in (its episode carries on)')
  limits.keep({ tokens: 0, refilledAt: 0, dropped: 20, lastDropAt: 0, ...H }, limits.keysOf('10.0.0.1', ''))
  assert.equal(limits.barred('10.0.0.2'), false, 'another address')
  now = 900
  assert.equal(limits.barred('10.0.0.1'), true)
  now = 1800
  assert.equal(limits.barred('10.0.0.1'), true, 'the attempt at 900 ms kept the episode going')
  now = 2801
  assert.equal(limits.barred('10.0.0.1'), false)
})
