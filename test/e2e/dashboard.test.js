/**
 * The coordinator's dashboard in real Chromium: it shows the demo shop's
 * figures, and they move as visitors load the shop — the first from the
 * origin, the second from the first — matching what the visitors' own
 * `Maygh.stats()` say and what `/stats` and `/metrics` expose. And the demo
 * origin's own dashboard, in Chromium and Firefox: quiet, its charts keep a
 * sensible scale; opened after a visitor has come and gone, they show what
 * the origin served, to the byte, on titled axes with units.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { launchBrowser, openShop, startStack, until } from '../support/browsers.js'

/**
 * What the origin dashboard's charts hold and show, read from Chart.js itself.
 * @param {import('playwright-core').Page} page
 */
function readOriginCharts (page) {
  return page.evaluate(() => {
    const { Chart } = /** @type {any} */ (globalThis)
    /** @param {any} scale */
    const axis = (scale) => ({
      title: scale.options.title.display ? scale.options.title.text : '',
      min: scale.min,
      max: scale.max,
      ticks: scale.ticks.map((/** @type {any} */ t) => String(t.label))
    })
    return Object.fromEntries(['bytes-chart', 'requests-chart'].map((id) => {
      const chart = Chart?.getChart(document.getElementById(id))
      return [id, chart && {
        drawn: chart.width > 0 && chart.height > 0,
        sums: chart.data.datasets.map((/** @type {any} */ d) => d.data.reduce((/** @type {number} */ n, /** @type {any} */ p) => n + p.y, 0)),
        // the highest second, the datasets stacked
        peak: Math.max(0, ...chart.data.datasets[0].data.map((/** @type {any} */ _, /** @type {number} */ i) =>
          chart.data.datasets.reduce((/** @type {number} */ n, /** @type {any} */ d) => n + d.data[i].y, 0))),
        points: chart.data.datasets.map((/** @type {any} */ d) => d.data.length),
        legend: chart.legend.legendItems.map((/** @type {any} */ item) => item.text),
        x: axis(chart.scales.x),
        y: axis(chart.scales.y)
      }]
    }))
  })
}

test('the dashboard\'s numbers move when visitors load a page, and match what the visitors counted', { timeout: 180000 }, async () => {
  const stack = await startStack({ coordinator: () => ({ usageFlushMs: 200 }) })
  const browser = await launchBrowser('chromium')
  try {
    const dashboard = await (await browser.newContext()).newPage()
    await dashboard.goto(stack.coordinator.httpUrl + '/dashboard')
    const read = () => dashboard.evaluate(() => Object.fromEntries(['share', 'peer-bytes', 'origin-bytes', 'cache-bytes', 'peers-online', 'updated', 'error']
      .map((id) => [id, document.getElementById(id)?.textContent ?? ''])
      .concat([['assets', String(document.querySelectorAll('#top-assets tbody tr').length)]])))
    const before = await until(async () => { const r = await read(); return r.updated !== 'never' && r })
    assert.equal(before['peer-bytes'], '0 B', `no bytes before any visitor (${JSON.stringify(before)})`)

    const site = new URL(stack.site.url).origin
    const usage = async () => (await (await fetch(`${stack.coordinator.httpUrl}/usage?site=${encodeURIComponent(site)}`)).json())
    const a = await openShop(browser, stack.shop, { data: { 'usage-ms': '300' } })
    const sa = await a.stats()
    await until(async () => (await usage()).total.origin >= sa.origin.bytes)
    const afterA = await until(async () => { const r = await read(); return r['origin-bytes'] !== '0 B' && r })
    assert.equal(afterA['peer-bytes'], '0 B')
    assert.equal(afterA.share, '0 %')

    const b = await openShop(browser, stack.shop, { data: { 'usage-ms': '300' } })
    const sb = await b.stats()
    assert.ok(sb.peer.bytes > 0, 'B got bytes from A')
    // What the visitors counted, summed by the coordinator: B's peer bytes, A's served bytes.
    const u = await until(async () => { const u = await usage(); return u.total.peer >= sb.peer.bytes && u.total.served >= sb.peer.bytes && u })
    assert.equal(u.total.peer, sb.peer.bytes)
    assert.equal(u.total.served, (await a.stats()).served.bytes)
    assert.equal(u.total.origin, sa.origin.bytes + sb.origin.bytes)
    const afterB = await until(async () => { const r = await read(); return r['peer-bytes'] !== '0 B' && r.share !== '0 %' && Number(r.assets) > 0 && r })
    assert.match(afterB.share, /^\d+(\.\d)? %$/)
    assert.equal(afterB['peers-online'], '2')
    assert.equal(afterB.error, '')
    const stats = await (await fetch(stack.coordinator.httpUrl + '/stats')).json()
    assert.equal(stats.usage[site].peer, sb.peer.bytes)
    const metrics = await (await fetch(stack.coordinator.httpUrl + '/metrics')).text()
    assert.ok(metrics.includes(`maygh_site_bytes_total{site="${site}",source="peer"} ${sb.peer.bytes}`), 'the site\'s figures in /metrics')
    assert.ok(await dashboard.evaluate(() => document.querySelector('canvas')?.getAttribute('height') !== null), 'the chart drew')
  } finally {
    await browser.close()
    await stack.close()
  }
})

test('the demo origin\'s dashboard: a sensible scale when quiet; opened after the traffic, charts it on titled axes with units (Chromium, Firefox)', { timeout: 180000 }, async () => {
  const stack = await startStack()
  stack.site.resetStats() // startStack read the manifest
  /** @type {import('playwright-core').Browser[]} */
  const browsers = []
  try {
    const chromium = await launchBrowser('chromium')
    browsers.push(chromium)
    const quiet = await (await chromium.newContext()).newPage()
    await quiet.goto(stack.site.url + '/dashboard')
    const q = await until(async () => { const c = await readOriginCharts(quiet); return c['bytes-chart']?.points[0] > 0 && c })
    assert.deepEqual(q['bytes-chart'].sums, [0, 0])
    assert.ok(q['bytes-chart'].y.max >= 100_000, `a quiet origin's bytes axis still reaches 100 KB/s (${q['bytes-chart'].y.max})`)
    assert.ok(!q['bytes-chart'].y.ticks.includes('1 B/s'), q['bytes-chart'].y.ticks.join())
    assert.ok(q['requests-chart'].y.max >= 10, `and its requests axis 10/s (${q['requests-chart'].y.max})`)
    await quiet.context().close()

    // A visitor comes and goes; only then does anybody open the dashboard.
    const visitor = await openShop(chromium, stack.shop)
    await visitor.close()
    const served = await stack.originStats()
    assert.ok(served.bytes > 0 && served.requests > 0)
    const assetBytes = Object.entries(served.byPath).filter(([path]) => stack.manifest.assets[path]).reduce((n, [, c]) => n + c.bytes, 0)
    assert.ok(assetBytes > 0)

    browsers.push(await launchBrowser('firefox'))
    for (const browser of browsers) {
      const page = await (await browser.newContext()).newPage()
      await page.goto(stack.site.url + '/dashboard')
      const c = await until(async () => { const c = await readOriginCharts(page); return c['requests-chart']?.sums[0] > 0 && c })
      const name = browser.browserType().name()
      const bytes = c['bytes-chart']
      const requests = c['requests-chart']
      assert.ok(bytes.drawn && requests.drawn, name)
      assert.equal(bytes.sums[0], assetBytes, `${name}: the assets' bytes, to the byte`)
      assert.equal(bytes.sums[0] + bytes.sums[1], served.bytes, `${name}: every byte the origin counted`)
      assert.equal(requests.sums[0], served.requests, `${name}: every request`)
      assert.equal(bytes.points[0], 600, 'ten minutes, one sample a second')
      assert.equal(bytes.legend.length, 2)
      assert.match(bytes.legend[0], /manifest assets/)
      for (const chart of [bytes, requests]) {
        assert.match(chart.x.title, /time/, name)
        assert.deepEqual([chart.x.min, chart.x.max], [-600, 0])
        assert.ok(chart.x.ticks.includes('now') && chart.x.ticks.includes('5 min ago'), chart.x.ticks.join())
      }
      assert.match(bytes.y.title, /bytes per second/)
      assert.match(requests.y.title, /requests per second/)
      for (const tick of bytes.y.ticks) assert.match(tick, /^\d+(\.\d+)? (B|KB|MB|GB)\/s$/, name)
      for (const tick of requests.y.ticks) assert.match(tick, /^\d+\/s$/, name)
      assert.ok(bytes.peak > 0 && bytes.y.max >= bytes.peak, `the bytes axis holds the busiest second (${bytes.y.max} >= ${bytes.peak})`)
      assert.ok(requests.y.max >= requests.peak, 'and the requests axis')
      const tiles = await page.evaluate(() => document.getElementById('origin-tiles')?.textContent ?? '')
      assert.match(tiles, new RegExp(`^${served.requests.toLocaleString('en-US')}requests`), `${name}: the tiles stay (${tiles})`)
      await page.selectOption('#window', '120')
      const closer = await readOriginCharts(page)
      assert.deepEqual([closer['bytes-chart'].x.min, closer['requests-chart'].x.min], [-120, -120])
    }
  } finally {
    for (const browser of browsers) await browser.close()
    await stack.close()
  }
})
