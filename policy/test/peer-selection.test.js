// The shared peer-selection rule, step by step. sim/test/shared-policy.test.js holds the
// coordinator's lookup and the simulator's against each other on random cases.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HolderRanking, rankKey, sampleNext, sampleStart } from '../peer-selection.js'

/**
 * Ranks `candidates` as the lookup handler does.
 * @template T
 * @param {T[]} candidates
 * @param {{ asker: T, count: number, lastChosen: (id: T) => number, isConnected?: (id: T) => boolean, accept?: (id: T) => boolean }} o
 * @returns {T[]}
 */
function rank (candidates, { asker, count, lastChosen, isConnected = () => false, accept = () => true }) {
  const ranking = new HolderRanking(count, asker)
  for (const id of candidates) {
    const key = rankKey(isConnected(id), lastChosen(id))
    if (ranking.wants(id, key) && accept(id)) ranking.insert(id, key)
  }
  return ranking.ids.slice(0, ranking.size)
}

/**
 * The positions a sample reads, given which positions hold live records.
 * @param {number} length
 * @param {number} want
 * @param {number} random the random source's one value
 * @param {(pos: number) => boolean} [live]
 */
function positions (length, want, random, live = () => true) {
  const read = []
  let taken = 0
  let draws = 0
  const source = { random: () => { draws++; return random } }
  for (let pos = sampleStart(length, want, source); pos !== -1; pos = sampleNext(pos, read.length, taken, length, want)) {
    read.push(pos)
    if (live(pos)) taken++
  }
  return { read, draws }
}

const chosenAt = (/** @type {Record<string, number>} */ times) => (/** @type {string} */ id) => times[id] ?? 0

test('the sample reads a run from a random start, wrapping, when the list is longer than the sample', () => {
  assert.deepEqual(positions(10, 3, 0.75), { read: [7, 8, 9], draws: 1 })
  assert.deepEqual(positions(10, 4, 0.85), { read: [8, 9, 0, 1], draws: 1 })
})

test('a list no longer than the sample is read whole from the start, with no random draw', () => {
  assert.deepEqual(positions(3, 3, 0.99), { read: [0, 1, 2], draws: 0 })
  assert.deepEqual(positions(0, 3, 0.5), { read: [], draws: 0 })
  assert.deepEqual(positions(5, 0, 0.5), { read: [], draws: 0 }, 'a sample of nobody reads nothing')
})

test('stale records are read but do not count toward the sample; the walk stops after one lap', () => {
  const stale = new Set([8, 0])
  assert.deepEqual(positions(10, 3, 0.75, (p) => !stale.has(p)).read, [7, 8, 9, 0, 1])
  assert.deepEqual(positions(4, 3, 0.5, () => false), { read: [2, 3, 0, 1], draws: 1 })
})

test('never the asker, at most count, least recently chosen first', () => {
  const picked = rank(['me', 'a', 'b', 'c', 'd'], { asker: 'me', count: 3, lastChosen: chosenAt({ a: 30, b: 10, c: 20, d: 40 }) })
  assert.deepEqual(picked, ['b', 'c', 'a'])
})

test('connected peers come first, whatever their last choice', () => {
  const picked = rank(['a', 'b', 'c'], { asker: 'me', count: 2, lastChosen: chosenAt({ a: 1, b: 2, c: 99 }), isConnected: (id) => id === 'c' })
  assert.deepEqual(picked, ['c', 'a'])
})

test('ties keep sample order', () => {
  assert.deepEqual(rank(['x', 'y', 'z'], { asker: 'me', count: 2, lastChosen: () => 5 }), ['x', 'y'])
  assert.deepEqual(rank([3, 1, 2], { asker: -1, count: 5, lastChosen: () => 0 }), [3, 1, 2])
})

test('a question asked only of holders the ranking wants gives the list asking all would', () => {
  const last = [50, 10, 40, 20, 30, 60, 5]
  const ids = [0, 1, 2, 3, 4, 5, 6]
  /** @type {number[]} */
  const asked = []
  const picked = rank(ids, { asker: -1, count: 2, lastChosen: (id) => last[id], accept: (id) => { asked.push(id); return id !== 1 } })
  const expected = ids.filter((id) => id !== 1).sort((a, b) => last[a] - last[b]).slice(0, 2)
  assert.deepEqual(picked, expected)
  assert.ok(!asked.includes(5), 'never asked about a holder ranked below the chosen')
})

test('a ranking that keeps nobody wants nobody; a full one wants only a better rank; the first is marked', () => {
  const ranking = new HolderRanking(0, 'me')
  assert.equal(ranking.wants('a', -1e300), false)
  ranking.reset(2, 'me')
  assert.equal(ranking.wants('me', 0), false, 'never the asker')
  assert.equal(ranking.wants('a', 5), true)
  ranking.insert('a', 5)
  ranking.insert('b', 3)
  assert.equal(ranking.wants('c', 4), true)
  assert.equal(ranking.wants('c', 5), false)
  assert.deepEqual(ranking.ids.slice(0, ranking.size), ['b', 'a'])
  assert.equal(ranking.marked(), 'b')
})

test('a ranking keeps more holders than its first key buffer', () => {
  const ids = Array.from({ length: 20 }, (_, i) => i)
  assert.deepEqual(rank(ids, { asker: -1, count: 20, lastChosen: (id) => 100 - id }), ids.slice().reverse())
})
