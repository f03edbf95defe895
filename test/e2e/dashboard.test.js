/**
 * The coordinator's dashboard in real Chromium: it shows the demo shop's
 * figures, and they move as visitors load the shop — the first from the
 * origin, the second from the first — matching what the visitors' own
 * `Maygh.stats()` say and what `/stats` and `/metrics` expose.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { launchBrowser, openShop, startStack, until } from '../support/browsers.js'

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
