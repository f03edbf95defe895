/**
 * The `usage` handler, called directly on the memory store (handler-context.js),
 * with the real UsageTally: a visitor's byte counts are summed per site (its
 * page's origin) and reach the store at the next flush.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { handlerContext } from './handler-context.js'
import { USAGE_IDS_PER_SOCKET } from '../src/usage.js'

const SHOP = 'https://shop.example'

test('usage reports are summed per site and stored at the next flush', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const one = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  const two = await hc.joined([], { ip: '198.51.100.1', origin: SHOP })
  assert.deepEqual(await hc.send(one, { type: 'usage', peer: 700, origin: 300, cache: 50, assets: [['/a.png', 500], ['/b.png', 200]], ref: 3 }), { type: 'counted' })
  assert.equal(await hc.send(two, { type: 'usage', peer: 100, served: 800, assets: [['/b.png', 100]] }), undefined, 'no ref, no reply')
  await hc.context.usage.flush()
  const usage = await hc.store.siteUsage(SHOP, 0, 10)
  assert.deepEqual(usage.total, { peer: 800, origin: 300, cache: 50, served: 800 })
  assert.deepEqual(usage.assets, [['/a.png', 500], ['/b.png', 300]])
  assert.equal(await hc.metric('maygh_usage_bytes_total{source="peer"}'), 800)
})

test('usage from a quarantined visitor or a page without an Origin is acknowledged and not counted', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const quarantined = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  quarantined.quarantined = true
  const anonymous = await hc.joined([], { ip: '198.51.100.1', origin: '' })
  assert.deepEqual(await hc.send(quarantined, { type: 'usage', peer: 5, ref: 1 }), { type: 'counted' })
  assert.deepEqual(await hc.send(anonymous, { type: 'usage', peer: 5, ref: 2 }), { type: 'counted' })
  await hc.context.usage.flush()
  assert.deepEqual(await hc.store.usageSites(), [])
  assert.equal(await hc.metric('maygh_usage_bytes_total{source="peer"}'), 0)
})

test('a report with an id is counted once per site, whichever visitor sends it again; metered as a repeat', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const OTHER = 'https://other.example'
  // A stashed report a page being left and the next page (or two tabs) both took.
  const leaving = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  const next = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  const elsewhere = await hc.joined([], { ip: '198.51.100.1', origin: OTHER })
  const stashed = { type: 'usage', peer: 3_502_698, assets: [['/a.png', 3_502_698]], id: 'k3x9q2' }
  assert.deepEqual(await hc.send(leaving, { ...stashed, ref: 1 }), { type: 'counted' })
  assert.deepEqual(await hc.send(next, { ...stashed, ref: 2 }), { type: 'counted' }, 'acknowledged all the same: the page has nothing to redo')
  await hc.send(next, stashed)
  await hc.send(elsewhere, stashed)
  await hc.send(next, { type: 'usage', peer: 10, id: 'k3x9q3' })
  await hc.send(next, { type: 'usage', peer: 1 })
  await hc.send(next, { type: 'usage', peer: 1 })
  await hc.context.usage.flush()
  assert.deepEqual((await hc.store.siteUsage(SHOP, 0, 10)).total, { peer: 3_502_710, origin: 0, cache: 0, served: 0 }, 'each id once, reports without one each time')
  assert.deepEqual((await hc.store.siteUsage(SHOP, 0, 10)).assets, [['/a.png', 3_502_698]])
  assert.equal((await hc.store.siteUsage(OTHER, 0, 10)).total.peer, 3_502_698, 'ids are per site')
  assert.equal(await hc.metric('maygh_usage_repeats_total'), 2)
  assert.equal(await hc.metric('maygh_usage_bytes_total{source="peer"}'), 2 * 3_502_698 + 12, 'repeats are not metered as bytes')
})

test('a socket\'s reports are checked by id USAGE_IDS_PER_SOCKET times at most: later ones count as they come, and leave no id in the store', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const one = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  for (let i = 0; i < USAGE_IDS_PER_SOCKET; i++) await hc.send(one, { type: 'usage', peer: 1, id: `id${i}` })
  await hc.send(one, { type: 'usage', peer: 1, id: 'id0' })
  await hc.send(one, { type: 'usage', peer: 1, id: 'fresh' })
  await hc.context.usage.flush()
  assert.equal((await hc.store.siteUsage(SHOP, 0, 10)).total.peer, USAGE_IDS_PER_SOCKET + 2, 'past the cap a repeated id counts too')
  assert.equal(await hc.store.claimUsage(SHOP, 'fresh', 1000), true, 'an id past the cap is not kept')
  assert.equal(await hc.store.claimUsage(SHOP, `id${USAGE_IDS_PER_SOCKET - 1}`, 1000), false)
  // Another socket (the visitor's next page) has its own.
  const two = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  await hc.send(two, { type: 'usage', peer: 5, id: 'id0' })
  await hc.send(two, { type: 'usage', peer: 7, id: 'other' })
  await hc.context.usage.flush()
  assert.equal((await hc.store.siteUsage(SHOP, 0, 10)).total.peer, USAGE_IDS_PER_SOCKET + 2 + 7)
})

test('a report with an id is counted when the store cannot say whether it is the first: nothing lost', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const one = await hc.joined([], { ip: '192.0.2.1', origin: SHOP })
  hc.store.claimUsage = async () => { throw new Error('store down') }
  assert.deepEqual(await hc.send(one, { type: 'usage', peer: 9, id: 'x', ref: 1 }), { type: 'counted' })
  await hc.context.usage.flush()
  assert.equal((await hc.store.siteUsage(SHOP, 0, 10)).total.peer, 9)
})

test('usage before join is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'usage', peer: 5 }), { code: 'MGH_ERR_NOT_JOINED' })
})
