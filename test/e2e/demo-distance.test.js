/**
 * The demo as `npm start` runs it (issue 23, item 6): the shop's origin as
 * far away as a real one (+80 ms round trip, 5 Mbit/s per response, the
 * site's own DistantLink) and the client at its defaults, nothing tuned. Two
 * visitors of the same engine open /about, then the shop, as the quick start
 * tells a newcomer: the second one's shop images come from the first, by the
 * origin's own counter. Both engines.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { launchBrowser, originImageBytes, startStack } from '../support/browsers.js'

for (const kind of /** @type {const} */ (['chromium', 'firefox'])) {
  test(`${kind}: with the origin 80 ms away and the client at its defaults, the second visitor's shop images come from the first`, { timeout: 120_000 }, async () => {
    const stack = await startStack({ site: { link: { rttMs: 80, mbps: 5 }, clientData: {} } })
    const browser = await launchBrowser(kind)
    try {
      const visit = async () => {
        const page = await (await browser.newContext()).newPage()
        for (const path of ['/about', '/']) {
          await page.goto(stack.site.url + path)
          await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
        }
        return page
      }
      const html = await (await fetch(stack.site.url + '/')).text()
      const images = Object.entries(stack.manifest.assets).filter(([p]) => p.startsWith('/img/') && html.includes(`"${p}"`))
      const imageBytes = images.reduce((n, [, a]) => n + a.size, 0)
      assert.ok(images.length >= 30, `${images.length} images on the shop page`)
      await visit()
      const before = originImageBytes(await stack.originStats())
      const second = await visit()
      const after = originImageBytes(await stack.originStats())
      const stats = await second.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
      const fromOrigin = after.bytes - before.bytes
      const figures = `origin sent ${fromOrigin} of ${imageBytes} image bytes; the page: peer ${stats.peer.bytes} B (${stats.peer.count}), origin ${stats.origin.bytes} B (${stats.origin.count})`
      assert.ok(fromOrigin <= 0.1 * imageBytes, `the origin sent at most 10 % of the shop's image bytes (${figures})`)
      assert.ok(stats.peer.bytes >= 0.9 * imageBytes, `the first visitor sent at least 90 % of them (${figures})`)
    } finally {
      await browser.close()
      await stack.close()
    }
  })
}
