import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TurnBatch } from '../src/turn-batch.js'

const nextTurn = () => new Promise((resolve) => setTimeout(resolve))

test('the keys of one turn go as one request (each once, at most max), opened once; the next turn opens another', async () => {
  /** @type {{ keys: string[], opened: number }[]} */
  const sent = []
  let opens = 0
  const batch = new TurnBatch(3, () => ++opens, async (keys, opened) => {
    sent.push({ keys, opened })
    return keys.length
  })
  const replies = ['a', 'b', 'a', 'c', 'd'].map((k) => batch.add(k))
  assert.deepEqual(sent, [], 'nothing sent within the turn')
  assert.deepEqual(await Promise.all(replies), [3, 3, 3, 3, 1], 'every caller gets its request\'s reply')
  assert.deepEqual(sent, [{ keys: ['a', 'b', 'c'], opened: 1 }, { keys: ['d'], opened: 2 }], 'a full batch closes: the next key opens another')
  await nextTurn()
  assert.equal(await batch.add('e'), 1)
  assert.deepEqual(sent.at(-1), { keys: ['e'], opened: 3 })
})

test('a failed request fails every key it carried, and the next batch is asked afresh', async () => {
  let fail = true
  const batch = new TurnBatch(10, () => {}, async (keys) => {
    if (fail) throw new Error('down')
    return keys
  })
  const a = batch.add('a')
  const b = batch.add('b')
  await assert.rejects(a, /down/)
  await assert.rejects(b, /down/)
  fail = false
  assert.deepEqual(await batch.add('c'), ['c'])
})
