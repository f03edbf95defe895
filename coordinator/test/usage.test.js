/**
 * Visitors' byte reports (`usage`) end to end through two coordinator shards
 * sharing one store: validated, summed per site (the socket's Origin), flushed
 * to the store, and the same sums read back from either shard's `/usage`,
 * `/stats` and `/metrics`; the dashboard and its Chart.js are served.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startCoordinator } from '../src/server.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { TestClient } from '../../test/support/test-client.js'
import { until } from '../../test/support/browsers.js'

const SHOP = 'https://shop.example'
const store = new MemoryStore()
/** @type {import('../src/server.js').Coordinator[]} */
let shards = []

before(async () => {
  shards = [await startCoordinator({ port: 0, stunPort: 0, usageFlushMs: 100 }, { store }), await startCoordinator({ port: 0, stunPort: 0, usageFlushMs: 100 }, { store })]
})
after(async () => {
  for (const c of shards) await c.close()
})

const get = async (/** @type {import('../src/server.js').Coordinator} */ c, /** @type {string} */ path) => {
  const res = await fetch(c.httpUrl + path)
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
}
const usage = async (/** @type {import('../src/server.js').Coordinator} */ c, query = `site=${encodeURIComponent(SHOP)}`) => JSON.parse((await get(c, `/usage?${query}`)).text)

test('reports from visitors on two shards add up per site in the store; every shard reads the same sums', async () => {
  const a = await TestClient.open(shards[0].url, { origin: SHOP })
  const b = await TestClient.open(shards[1].url, { origin: SHOP })
  const other = await TestClient.open(shards[1].url, { origin: 'https://other.example' })
  const anonymous = await TestClient.open(shards[0].url)
  for (const c of [a, b, other, anonymous]) await c.join()
  assert.deepEqual(await a.request({ type: 'usage', peer: 7000, origin: 3000, cache: 500, served: 0, assets: [['/img/a.png', 5000], ['/img/b.png', 2000]] }), { type: 'counted', ref: 2 })
  await b.request({ type: 'usage', peer: 1000, origin: 0, served: 8000, assets: [['/img/b.png', 1000]] })
  await a.request({ type: 'usage', peer: 2000, assets: [['/img/b.png', 2000]] })
  await other.request({ type: 'usage', origin: 99 })
  await anonymous.request({ type: 'usage', peer: 12345 })

  const want = { peer: 10000, origin: 3000, cache: 500, served: 8000 }
  for (const shard of shards) {
    const u = await until(async () => { const u = await usage(shard); return u.total.peer === 10000 && u.total.served === 8000 && u.peers === 4 && u }, 20)
    assert.deepEqual(u.total, want)
    assert.equal(u.peerShare, 0.7692, 'peer / (peer + origin)')
    assert.deepEqual(new Map(u.assets), new Map([['/img/a.png', 5000], ['/img/b.png', 5000]]))
    assert.equal(u.minutes.length, 1)
    assert.deepEqual(u.minutes[0].counts, want)
    assert.deepEqual(u.sites, [SHOP, 'https://other.example'].sort(), 'a page without an Origin is counted for no site')
    assert.equal(u.peers, 4, 'peers online over both shards (as of each shard\'s last beat)')
  }
  const stats = JSON.parse((await get(shards[1], '/stats')).text)
  assert.deepEqual(stats.usage[SHOP], { ...want, peerShare: 0.7692 })
  assert.equal(stats.usage['https://other.example'].origin, 99)
  const metrics = (await get(shards[0], '/metrics')).text
  assert.match(metrics, /maygh_site_bytes_total\{site="https:\/\/shop.example",source="peer"\} 10000/)
  assert.match(metrics, /maygh_usage_bytes_total\{source="peer"\} 9000/, 'this shard\'s own counted bytes (not those of the page without an Origin)')
  for (const c of [a, b, other, anonymous]) await c.close()
})

test('a bad usage report gets a coded error and counts nothing; a quarantined visitor\'s reports are not counted', async () => {
  const c = await TestClient.open(shards[0].url, { origin: 'https://bad.example' })
  await c.join()
  for (const bad of [{ peer: -1 }, { origin: 1.5 }, { served: 2 ** 41 }, { cache: '5' }, { assets: {} }, { assets: [['img.png', 1]] }, { assets: [['/a', -1]] },
    { assets: Array.from({ length: 65 }, (_, i) => [`/${i}`, 1]) }, { assets: [['/' + 'x'.repeat(512), 1]] }]) {
    const reply = await c.request({ type: 'usage', ...bad })
    assert.equal(reply.type, 'error', JSON.stringify(bad))
    assert.equal(reply.code, 'MGH_ERR_BAD_FIELD', JSON.stringify(bad))
  }
  const session = [...shards[0].sessions.values()].find((s) => s.origin === 'https://bad.example')
  assert.ok(session)
  session.quarantined = true
  await c.request({ type: 'usage', peer: 5 })
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal((await usage(shards[0])).sites.includes('https://bad.example'), false)
  await c.close()
})

test('/usage checks its query; the dashboard and its Chart.js are served', async () => {
  for (const query of ['minutes=0', 'minutes=1.5', 'minutes=44641', 'minutes=x']) {
    const res = await get(shards[0], `/usage?${query}`)
    assert.equal(res.status, 400, query)
    assert.equal(JSON.parse(res.text).error.code, 'MGH_ERR_HTTP_BAD_QUERY')
  }
  const none = await usage(shards[0], 'site=https%3A%2F%2Fnobody.example&minutes=5')
  assert.deepEqual(none.total, { peer: 0, origin: 0, cache: 0, served: 0 })
  assert.equal(none.site, 'https://nobody.example')
  const page = await get(shards[0], '/dashboard')
  assert.equal(page.status, 200)
  assert.match(page.type, /^text\/html/)
  assert.match(page.text, /<script src="\/dashboard\/chart.js">/)
  const chart = await get(shards[1], '/dashboard/chart.js')
  assert.equal(chart.status, 200)
  assert.match(chart.type, /javascript/)
  assert.match(chart.text, /Chart/)
})
