/**
 * The `usage` handler, called directly on the memory store (handler-context.js),
 * with the real UsageTally: a visitor's byte counts are summed per site (its
 * page's origin) and reach the store at the next flush.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { handlerContext } from './handler-context.js'

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

test('usage before join is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'usage', peer: 5 }), { code: 'MGH_ERR_NOT_JOINED' })
})
