import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { Deadlines } from '../src/deadlines.js'

/** A clock the test moves, and a way to let the one timer run. */
function manualClock () {
  let t = 0
  return { now: () => t, advance: (ms) => { t += ms } }
}

test('a deadline fires once its time has passed, unless settled; settled ones never fire', async () => {
  const clock = manualClock()
  const deadlines = new Deadlines(20, clock.now)
  const fired = []
  const a = deadlines.start(() => fired.push('a'))
  clock.advance(5)
  deadlines.start(() => fired.push('b'))
  deadlines.settle(a)
  clock.advance(20)
  await sleep(40)
  assert.deepEqual(fired, ['b'])
  deadlines.clear()
})

test('deadlines not yet due wait for their own time, in the order they started', async () => {
  const clock = manualClock()
  const deadlines = new Deadlines(10, clock.now)
  const fired = []
  deadlines.start(() => fired.push(1))
  clock.advance(10)
  deadlines.start(() => fired.push(2))
  await sleep(30)
  assert.deepEqual(fired, [1], 'the second is not due on the manual clock')
  clock.advance(10)
  await sleep(30)
  assert.deepEqual(fired, [1, 2])
  assert.equal(deadlines.timer, null, 'nothing left: no timer')
})

test('the ring grows past its first slots and keeps every deadline in order', async () => {
  const clock = manualClock()
  const deadlines = new Deadlines(5, clock.now)
  const fired = []
  const serials = []
  for (let i = 0; i < 5000; i++) serials.push(deadlines.start(() => fired.push(i)))
  for (let i = 0; i < 5000; i += 2) deadlines.settle(serials[i])
  clock.advance(5)
  await sleep(20)
  assert.equal(fired.length, 2500)
  assert.ok(fired.every((n, i) => n === 2 * i + 1), 'the unsettled ones, in order')
})

test('a late callback may start another deadline; one timer stays armed', async () => {
  const clock = manualClock()
  const deadlines = new Deadlines(5, clock.now)
  const fired = []
  deadlines.start(() => { fired.push('first'); deadlines.start(() => fired.push('second')) })
  clock.advance(5)
  await sleep(20)
  assert.deepEqual(fired, ['first'])
  clock.advance(5)
  await sleep(20)
  assert.deepEqual(fired, ['first', 'second'])
})

test('bound: the promise\'s outcome in time, the error after', async () => {
  const deadlines = new Deadlines(30)
  assert.equal(await deadlines.bound(Promise.resolve(7), () => new Error('late')), 7)
  await assert.rejects(deadlines.bound(Promise.reject(new Error('own')), () => new Error('late')), /own/)
  // The timer is unref'd (as a server's timers are): something else keeps the process up, as a socket would.
  const alive = setInterval(() => {}, 1000)
  const started = performance.now()
  await assert.rejects(deadlines.bound(new Promise(() => {}), () => new Error('late')), /late/)
  clearInterval(alive)
  assert.ok(performance.now() - started >= 29, 'not before its time')
})
