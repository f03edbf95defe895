/**
 * A session's queue of its peer's requests (session.js): changes (`enqueue`)
 * run one at a time in order, reads (`after`) wait for the changes before them,
 * and a task done at once (the in-process store's) holds nothing up.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveConfig } from '../src/config.js'
import { Session } from '../src/session.js'

const session = () => new Session(/** @type {any} */ ({ readyState: 1, OPEN: 1, bufferedAmount: 0, send () {} }), resolveConfig({}), { id: 1, now: () => 0 })

test('a change done at once runs now and leaves nothing for later tasks to wait for', () => {
  const s = session()
  /** @type {string[]} */
  const ran = []
  s.enqueue(() => { ran.push('change') })
  assert.equal(s.pending, 0)
  s.after(() => { ran.push('read') })
  assert.deepEqual(ran, ['change', 'read'], 'both ran in this turn, no microtask')
})

test('a change that waits holds up the changes and reads after it, in order, and no more', async () => {
  const s = session()
  /** @type {string[]} */
  const ran = []
  /** @type {() => void} */
  let release = () => {}
  s.enqueue(() => new Promise((resolve) => { release = () => { ran.push('slow change'); resolve() } }))
  s.enqueue(() => { ran.push('quick change') })
  s.after(() => { ran.push('read') })
  assert.equal(s.pending, 2)
  assert.equal(ran.length, 0)
  release()
  await s.queue
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(ran, ['slow change', 'quick change', 'read'])
  assert.equal(s.pending, 0)
  s.enqueue(() => { ran.push('now') })
  assert.equal(ran.length, 4, 'with the queue empty again, at once')
})
