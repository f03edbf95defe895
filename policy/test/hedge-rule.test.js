/**
 * The hedge rule (hedge-rule.js), the one the client and the simulator both
 * apply: how long each kind of request lets peers stay quiet before the
 * origin is asked, under each of the site's preferences.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HEDGE_FACTOR, PACE_FACTOR, PASS_OVER_FLOOR_MS, belowFold, hedgeDeadline, originMs, outrun, passOverMs, priorityOf } from '../hedge-rule.js'

const bounds = { hedgeMinMs: 100, hedgeMaxMs: 1500 }
/** an origin 80 ms away at 5 Mbit/s: 625 bytes per ms */
const distant = { ttfb: 90, rate: 625 }

test('latency first: every request races at twice the origin\'s time to first byte, within the bounds', () => {
  const settings = { hedge: /** @type {const} */ ('latency'), ...bounds }
  for (const priority of /** @type {const} */ (['blocking', 'viewport', 'later'])) {
    assert.equal(hedgeDeadline({ size: 500_000, priority }, distant, settings), HEDGE_FACTOR * 90)
  }
  assert.equal(hedgeDeadline({ size: 1, priority: 'later' }, { ttfb: 2, rate: 1e5 }, settings), 100, 'a nearby origin: the floor')
  assert.equal(hedgeDeadline({ size: 1, priority: 'later' }, { ttfb: 5000, rate: 1 }, settings), 1500, 'a very slow origin: the cap')
})

test('balanced: render-blocking races; a viewport image adds its own download time; the rest waits up to the cap', () => {
  const settings = { hedge: /** @type {const} */ ('balanced'), ...bounds }
  assert.equal(hedgeDeadline({ size: 100_000, priority: 'blocking' }, distant, settings), 180)
  assert.equal(hedgeDeadline({ size: 100_000, priority: 'viewport' }, distant, settings), 180 + 160)
  assert.equal(hedgeDeadline({ size: 10_000, priority: 'viewport' }, distant, settings), 180 + 16, 'a small image: little more than the race point')
  assert.equal(hedgeDeadline({ size: 5_000_000, priority: 'viewport' }, distant, settings), 1500, 'a huge one: the cap')
  assert.equal(hedgeDeadline({ size: 0, priority: 'viewport' }, distant, settings), 180, 'size unknown: the race point')
  assert.equal(hedgeDeadline({ size: 100_000, priority: 'viewport' }, { ttfb: 90, rate: null }, settings), 180, 'rate not yet seen: the race point')
  assert.equal(hedgeDeadline({ size: 1_000, priority: 'later' }, distant, settings), 1500)
  assert.equal(hedgeDeadline({ size: 1_000, priority: 'later' }, { ttfb: 2, rate: 1e5 }, settings), 1500, 'below the fold waits even for a nearby origin')
})

test('before the origin has been seen, every preference but savings waits the cap; savings never asks the origin by time', () => {
  const unknown = { ttfb: null, rate: null }
  assert.equal(hedgeDeadline({ size: 1, priority: 'blocking' }, unknown, { hedge: 'balanced', ...bounds }), 1500)
  assert.equal(hedgeDeadline({ size: 1, priority: 'blocking' }, unknown, { hedge: 'latency', ...bounds }), 1500)
  for (const origin of [unknown, distant]) {
    assert.equal(hedgeDeadline({ size: 1, priority: 'blocking' }, origin, { hedge: 'savings', ...bounds }), Infinity)
  }
})

test('the origin\'s whole answer: its time to first byte and the body at its rate; unknown before it has answered', () => {
  assert.equal(originMs(50_000, { ttfb: null, rate: 100 }), null)
  assert.equal(originMs(50_000, { ttfb: 80, rate: null }), 80, 'no rate seen: the first byte only')
  assert.equal(originMs(50_000, { ttfb: 80, rate: 625 }), 160, '50 KB at 5 Mbit/s after 80 ms')
})

test('a holder is outrun when it would deliver no sooner than the origin asked at the deadline; unknowns and savings first never outrun it', () => {
  // A nearby origin (5 ms whole), the 100-ms floor: a holder that takes 170 ms loses, one that takes 60 ms wins.
  assert.equal(outrun(170, 100, 5), true)
  assert.equal(outrun(105, 100, 5), true, 'a tie goes to the origin')
  assert.equal(outrun(60, 100, 5), false)
  // A distant origin (160 ms whole) asked at 250 ms: the same 170-ms holder wins by far.
  assert.equal(outrun(170, 250, 160), false)
  assert.equal(outrun(null, 100, 5), false, 'before the page has seen a holder answer')
  assert.equal(outrun(170, 100, null), false, 'before the origin has been seen')
  assert.equal(outrun(1e9, Infinity, 5), false, 'savings first')
})

test('priorities: scripts, styles and fonts block; what the page listed below the fold is later; the rest is in the viewport', () => {
  assert.equal(priorityOf('script', true), 'blocking')
  assert.equal(priorityOf('style', false), 'blocking')
  assert.equal(priorityOf('font', false), 'blocking')
  assert.equal(priorityOf('image', true), 'later')
  assert.equal(priorityOf('image', false), 'viewport')
  assert.equal(priorityOf('', false), 'viewport')
})

test('below the fold: what the page placed there; while it is still placing its images, any it has not placed in view; once done, only what it placed there', () => {
  const below = new Set(['/b.png'])
  const above = new Set(['/a.png'])
  for (const placing of [true, false]) {
    assert.equal(belowFold({ below, above, placing }, '/b.png'), true)
    assert.equal(belowFold({ below, above, placing }, '/a.png'), false)
    // Not parsed yet, or a CSS background: not raced with the origin while the page is placing.
    assert.equal(belowFold({ below, above, placing }, '/c.png'), placing)
  }
})

test('passing a holder over: at the cap until the page has seen its peers\' pace; then at PACE_FACTOR × that pace, within the floor and the cap', () => {
  assert.equal(passOverMs(1000, null), 1000)
  assert.equal(passOverMs(Infinity, null), Infinity, 'savings first, no pace yet: only a stall ends the wait')
  assert.equal(passOverMs(1000, 100), PACE_FACTOR * 100)
  assert.equal(passOverMs(Infinity, 100), PACE_FACTOR * 100, 'savings first still leaves a holder far slower than the others')
  assert.equal(passOverMs(1000, 5), PASS_OVER_FLOOR_MS, 'a nearby holder: the floor')
  assert.equal(passOverMs(1000, 400), 1000, 'slow peers: the cap')
})
