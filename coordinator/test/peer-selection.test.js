import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HolderRanking, selectHolders, POLICY_DEFAULTS } from '../src/policy/peer-selection.js'

const chosenAt = (/** @type {Record<string, number>} */ times) => (/** @type {string} */ id) => times[id] ?? 0

test('never returns the asker, at most count, least recently chosen first', () => {
  const picked = selectHolders(['me', 'a', 'b', 'c', 'd'], { asker: 'me', count: 3, lastChosen: chosenAt({ a: 30, b: 10, c: 20, d: 40 }) })
  assert.deepEqual(picked, ['b', 'c', 'a'])
})

test('connected peers come first, whatever their last choice', () => {
  const picked = selectHolders(['a', 'b', 'c'], { asker: 'me', count: 2, lastChosen: chosenAt({ a: 1, b: 2, c: 99 }), isConnected: (id) => id === 'c' })
  assert.deepEqual(picked, ['c', 'a'])
})

test('ties keep candidate order; accept excludes', () => {
  assert.deepEqual(selectHolders(['x', 'y', 'z'], { asker: 'me', count: 2, lastChosen: () => 5 }), ['x', 'y'])
  assert.deepEqual(selectHolders(['x', 'y', 'z'], { asker: 'me', count: 2, lastChosen: () => 5, accept: (id) => id !== 'x' }), ['y', 'z'])
})

test('works on integer ids and typed arrays (the simulator)', () => {
  const last = new Float64Array([5, 1, 3, 0])
  assert.deepEqual(selectHolders(new Int32Array([0, 1, 2, 3]), { asker: 3, count: 2, lastChosen: (id) => last[id] }), [1, 2])
})

test('default count and an empty candidate list', () => {
  assert.equal(selectHolders(['a', 'b', 'c', 'd', 'e'], { asker: 'me', lastChosen: () => 0 }).length, POLICY_DEFAULTS.maxHolders)
  assert.deepEqual(selectHolders([], { asker: 'me', lastChosen: () => 0 }), [])
})

test('accept is asked only about candidates that could be chosen, with the same result', () => {
  const last = [50, 10, 40, 20, 30, 60, 5]
  const ids = [0, 1, 2, 3, 4, 5, 6]
  const asked = []
  const picked = selectHolders(ids, { asker: -1, count: 2, lastChosen: (id) => last[id], accept: (id) => { asked.push(id); return id !== 1 } })
  // Filtering first would give the same two: the least recently chosen accepted ones.
  const expected = ids.filter((id) => id !== 1).sort((a, b) => last[a] - last[b]).slice(0, 2)
  assert.deepEqual(picked, expected)
  assert.ok(!asked.includes(5), 'never asked about a candidate ranked below the chosen')
})

test('a count below one chooses nobody', () => {
  assert.deepEqual(selectHolders(['a'], { asker: 'me', count: 0, lastChosen: () => 0 }), [])
})

test('a ranking that keeps nobody admits nobody', () => {
  const ranking = new HolderRanking(0)
  assert.equal(ranking.admits(-1e300), false)
  ranking.reset(2)
  assert.equal(ranking.admits(5), true)
  ranking.insert('a', 5)
  ranking.insert('b', 3)
  assert.equal(ranking.admits(4), true)
  assert.equal(ranking.admits(5), false, 'a full list admits only a better rank')
  assert.deepEqual(ranking.ids.slice(0, ranking.size), ['b', 'a'])
})
