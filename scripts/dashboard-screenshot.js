#!/usr/bin/env node
/**
 * Makes the README's picture of the coordinator's dashboard (docs/dashboard.png)
 * from a real run of what the quick start describes: the demo shop as `npm
 * start` runs it (its origin acting 80 ms away at 5 Mbit/s, the client at its
 * defaults, transparent mode), its coordinator, and `--visitors` Chromium
 * visitors (default 6) arriving `--every` seconds apart (default 20), each
 * opening `/about` first (the service worker installs there: a visitor's first
 * page is not under it) and then the shop, and staying; then, once the
 * coordinator has every visitor's report, a screenshot of `/dashboard`. It
 * prints what the dashboard says beside what the origin's own byte counter
 * (`/origin-stats`) says.
 *
 * Run it inside the loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node scripts/dashboard-screenshot.js
 */
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { launchBrowser, startStack, until } from '../test/support/browsers.js'

const { values } = parseArgs({ options: { visitors: { type: 'string', default: '6' }, every: { type: 'string', default: '20' } } })
const out = fileURLToPath(new URL('../docs/dashboard.png', import.meta.url))
const stack = await startStack({ coordinator: () => ({ usageFlushMs: 500 }), site: { link: { rttMs: 80, mbps: 5 }, clientData: {} } })
const browser = await launchBrowser('chromium')
const site = stack.site.url
const origin = new URL(site).origin
const assets = Object.values(stack.manifest.assets)
const pct = (/** @type {number} */ share) => `${(share * 100).toFixed(1)} %`
try {
  for (let i = 0; i < Number(values.visitors); i++) {
    if (i > 0) await sleep(Number(values.every) * 1000)
    const page = await (await browser.newContext()).newPage()
    for (const path of ['/about', '/']) {
      await page.goto(site + path)
      await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    }
    const s = await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
    console.log(`visitor ${i + 1}: the shop's assets: ${s.peer.bytes} bytes from peers, ${s.origin.bytes} from the origin, ${s.cache.bytes} from its store`)
  }
  // Every visitor loaded each of the shop's assets once over the network (on /about or on the shop).
  const needed = Number(values.visitors) * assets.reduce((n, a) => n + a.size, 0)
  const usage = await until(async () => {
    const u = await (await fetch(`${stack.coordinator.httpUrl}/usage?site=${encodeURIComponent(origin)}`)).json()
    return u.total.peer + u.total.origin >= needed && u
  }, 250)
  const counted = Object.entries((await stack.originStats()).byPath).reduce((n, [path, c]) => n + (path in stack.manifest.assets ? c.bytes : 0), 0)
  console.log(`dashboard: ${pct(usage.peerShare)} served by visitors (${usage.total.peer} bytes from peers, ${usage.total.origin} from the origin); ` +
    `the origin's own counter: ${counted} asset bytes of the ${needed} the pages loaded, ${pct(1 - counted / needed)} served by visitors`)

  const dashboard = await (await browser.newContext({ viewport: { width: 1100, height: 820 } })).newPage()
  await dashboard.goto(stack.coordinator.httpUrl + '/dashboard')
  await until(async () => dashboard.evaluate(() => document.querySelectorAll('#top-assets tbody tr').length > 0))
  await sleep(500)
  await dashboard.screenshot({ path: out, fullPage: true })
  console.log(`wrote ${out}`)
} finally {
  await browser.close()
  await stack.close()
}
