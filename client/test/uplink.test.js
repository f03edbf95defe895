/**
 * Whether a visitor uploads (uplink.js), in Node: the page's storage and
 * connection are given to it as the browser would (Storage-like objects, an
 * EventTarget for `navigator.connection`). The real browser runs it end to
 * end in test/e2e/uplink.test.js.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Uplink } from '../src/uplink.js'
import { readConfig } from '../src/config.js'
import { MemoryStorage } from './memory-storage.js'

const MB = 1048576

/**
 * A page's environment: storage shared by the site's tabs, this tab's session, a connection.
 * @param {{ local?: MemoryStorage, connection?: EventTarget & { saveData?: boolean, type?: string }, date?: string }} [o]
 */
function page ({ local = new MemoryStorage(), connection = new EventTarget(), date = '2026-11-23T12:00:00' } = {}) {
  const clock = { now: new Date(date) }
  const FakeDate = /** @type {DateConstructor} */ /** @type {unknown} */ function () { return new Date(clock.now) }
  const events = new EventTarget()
  return {
    local,
    connection,
    clock,
    events,
    env: /** @type {any} */ ({ localStorage: local, sessionStorage: new MemoryStorage(), navigator: { connection }, addEventListener: events.addEventListener.bind(events), Date: FakeDate })
  }
}

/** @param {Record<string, string>} data @param {ReturnType<typeof page>} p */
const uplinkOf = (data, p) => new Uplink(readConfig(data), p.env)

test('on by default; the site may make its visitors receive-only or keep them off peers', () => {
  assert.deepEqual(uplinkOf({}, page()).state(), { mode: 'on' })
  assert.deepEqual(uplinkOf({ mayghMode: 'receive-only' }, page()).state(), { mode: 'receive-only', why: 'site' })
  assert.deepEqual(uplinkOf({ mayghMode: 'off' }, page()).state(), { mode: 'off', why: 'site' })
  const warnings = []
  assert.equal(readConfig({ mayghMode: 'upload-only' }, (m) => warnings.push(m)).mode, 'on')
  assert.match(warnings[0], /data-maygh-mode=upload-only/)
})

test('optOut and optIn are the visitor\'s, remembered across visits, and win over the site\'s default', () => {
  const p = page()
  const u = uplinkOf({ mayghMode: 'receive-only' }, p)
  /** @type {string[]} */
  const changes = []
  u.on('change', (/** @type {string} */ m) => changes.push(m))
  u.choose('out')
  assert.deepEqual(u.state(), { mode: 'off', why: 'opted-out' })
  // Next visit, another tab: still out.
  assert.equal(uplinkOf({}, page({ local: p.local })).state().mode, 'off')
  u.choose('in')
  assert.deepEqual(u.state(), { mode: 'on' })
  assert.equal(uplinkOf({ mayghMode: 'off' }, page({ local: p.local })).state().mode, 'on', 'consent given lifts the site\'s default')
  assert.deepEqual(changes, ['off', 'on'])
})

test('Save-Data or a cellular connection make an opted-in visitor receive-only, and change as the connection does', () => {
  const p = page()
  const u = uplinkOf({}, p)
  u.choose('in')
  /** @type {string[]} */
  const changes = []
  u.on('change', (/** @type {string} */ m) => changes.push(m))
  Object.assign(p.connection, { saveData: true })
  p.connection.dispatchEvent(new Event('change'))
  assert.deepEqual(u.state(), { mode: 'receive-only', why: 'save-data' })
  Object.assign(p.connection, { saveData: false, type: 'cellular' })
  p.connection.dispatchEvent(new Event('change'))
  assert.deepEqual(u.state(), { mode: 'receive-only', why: 'cellular' })
  Object.assign(p.connection, { type: 'wifi' })
  p.connection.dispatchEvent(new Event('change'))
  assert.equal(u.serving(), true)
  assert.deepEqual(changes, ['receive-only', 'on'])
})

test('the session budget: receive-only once spent, for this tab only; a reload of it continues the count', () => {
  const p = page()
  const u = uplinkOf({ uploadSessionMb: '1', uploadDayMb: '10' }, p)
  /** @type {string[]} */
  const changes = []
  u.on('change', (/** @type {string} */ m) => changes.push(m))
  u.spend(0.6 * MB)
  assert.equal(u.serving(), true)
  u.spend(0.6 * MB)
  assert.deepEqual(u.state(), { mode: 'receive-only', why: 'budget' })
  assert.deepEqual(changes, ['receive-only'])
  assert.deepEqual(u.sent(), { session: 1.2 * MB, day: 1.2 * MB })
  // A reload keeps this tab's session storage; another tab starts its own session.
  assert.equal(new Uplink(readConfig({ uploadSessionMb: '1' }), p.env).serving(), false)
  assert.equal(uplinkOf({ uploadSessionMb: '1', uploadDayMb: '10' }, page({ local: p.local })).serving(), true)
})

test('the day budget is shared by the site\'s tabs and starts again the next day', () => {
  const local = new MemoryStorage()
  const a = page({ local })
  const b = page({ local })
  const config = { uploadSessionMb: '100', uploadDayMb: '2' }
  const ua = uplinkOf(config, a)
  const ub = uplinkOf(config, b)
  ua.spend(1.5 * MB)
  assert.equal(ub.serving(), true)
  ub.spend(0.5 * MB)
  assert.deepEqual(ub.state(), { mode: 'receive-only', why: 'budget' })
  assert.equal(ua.serving(), false, 'the other tab is over today\'s budget too')
  a.clock.now = new Date('2026-11-24T00:00:01')
  assert.deepEqual(ua.sent(), { session: 1.5 * MB, day: 0 })
  assert.equal(ua.serving(), true)
})

test('a budget of 0 means never upload; a budget may be fractional, and is clamped', () => {
  assert.equal(uplinkOf({ uploadSessionMb: '0' }, page()).state().why, 'budget')
  assert.equal(readConfig({ uploadSessionMb: '0.5' }).uploadSessionMb, 0.5)
  assert.equal(readConfig({ uploadDayMb: '-3' }).uploadDayMb, 0)
})

test('another tab\'s choice reaches this one through the storage event', () => {
  const local = new MemoryStorage()
  const a = page({ local })
  const ua = uplinkOf({}, a)
  /** @type {string[]} */
  const changes = []
  ua.on('change', (/** @type {string} */ m) => changes.push(m))
  uplinkOf({}, page({ local })).choose('out')
  a.events.dispatchEvent(new Event('storage'))
  assert.deepEqual(changes, ['off'])
})

test('without storage (blocked cookies), it still works for the page: on, nothing remembered', () => {
  const throwing = { getItem () { throw new Error('denied') }, setItem () { throw new Error('denied') }, removeItem () { throw new Error('denied') } }
  const u = new Uplink(readConfig({}), /** @type {any} */ ({ localStorage: throwing, sessionStorage: throwing }))
  assert.equal(u.serving(), true)
  u.spend(MB)
  u.choose('out')
  assert.equal(u.serving(), true)
})
