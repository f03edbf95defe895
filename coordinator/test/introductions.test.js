/**
 * Introductions (introductions.js): who a peer may signal, for how long and
 * how many bytes, and which are dropped first when it keeps too many.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Introductions } from '../src/introductions.js'

const make = (max = 3) => new Introductions({ introductionTtlMs: 1000, introductionSignalBytes: 100, maxIntroductions: max })
const kept = (/** @type {Introductions} */ i) => [...i.peers.keys()]

test('the least recently made or renewed go first, however often one is renewed in a row', () => {
  const i = make()
  for (const p of ['a', 'b', 'c']) i.add(p, 0, true)
  i.add('a', 1, false)
  assert.deepEqual(kept(i), ['b', 'c', 'a'])
  i.add('a', 2, false)
  i.add('a', 3, true)
  assert.deepEqual(kept(i), ['b', 'c', 'a'], 'the newest renewed again stays the newest')
  i.add('d', 4, true)
  assert.deepEqual(kept(i), ['c', 'a', 'd'])
  i.add('c', 5, false)
  i.add('e', 6, true)
  assert.deepEqual(kept(i), ['d', 'c', 'e'])
})

test('a renewal starts the time again; a lookup gives a fresh budget, a signal from the peer does not', () => {
  const i = make()
  i.add('a', 0, true)
  i.spend('a', 60, 10)
  assert.throws(() => i.spend('a', 60, 20), { code: 'MGH_ERR_SIGNAL_BUDGET' })
  i.add('a', 900, false)
  assert.throws(() => i.spend('a', 60, 1500), { code: 'MGH_ERR_SIGNAL_BUDGET' }, 'still 40 left, now until 1,900')
  i.add('a', 1600, true)
  i.spend('a', 100, 2500)
  assert.equal(i.looked('a', 2500), true)
  assert.throws(() => i.spend('a', 1, 2600), { code: 'MGH_ERR_NOT_INTRODUCED' }, 'expired at 2,600')
  assert.deepEqual(kept(i), [], 'and forgotten')
  i.add('a', 3000, false)
  assert.equal(i.looked('a', 3000), false, 'introduced again by its own signal only')
  i.spend('a', 100, 3000)
})
