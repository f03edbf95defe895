#!/usr/bin/env node
/**
 * Makes the README's picture of the coordinator's dashboard (docs/dashboard.png)
 * from a real run: the demo shop, its coordinator, and `--visitors` Chromium
 * visitors (default 6) arriving `--every` seconds apart (default 20), each
 * staying; then a screenshot of `/dashboard`.
 *
 * Run it inside the loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node scripts/dashboard-screenshot.js
 */
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { launchBrowser, openShop, startStack, until } from '../test/support/browsers.js'

const { values } = parseArgs({ options: { visitors: { type: 'string', default: '6' }, every: { type: 'string', default: '20' } } })
const out = fileURLToPath(new URL('../docs/dashboard.png', import.meta.url))
const stack = await startStack({ coordinator: () => ({ usageFlushMs: 500 }) })
const browser = await launchBrowser('chromium')
try {
  for (let i = 0; i < Number(values.visitors); i++) {
    if (i > 0) await sleep(Number(values.every) * 1000)
    const v = await openShop(browser, stack.shop, { data: { 'usage-ms': '500' } })
    const s = await v.stats()
    console.log(`visitor ${i + 1}: ${s.peer.bytes} bytes from peers, ${s.origin.bytes} from the origin`)
  }
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
