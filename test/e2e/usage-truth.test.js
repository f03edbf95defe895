/**
 * The savings a site sees are true (issue 22, item 4), in real Chromium and
 * Firefox: visitors browse the demo shop in transparent mode (its default
 * page, the client's defaults but for what the demo sets), some leaving a
 * page right after it has loaded — first views (not yet under the service
 * worker, whose bytes the page learns late, from the worker's adoption)
 * closed or navigated away from, a page under the worker closed or left —
 * and what the coordinator sums from their `usage` reports (`/stats`,
 * `/usage`) agrees with what the origin's own counter (`/origin-stats`) saw:
 * the share of the asset bytes served by visitors within 3 points, and the
 * origin's asset bytes within 3 %.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { launchBrowser, startStack } from '../support/browsers.js'

/** how long the reports of pages already gone may take to show (a bound, not a measurement) */
const REPORTS_BOUND_MS = 30_000

for (const kind of /** @type {const} */ (['chromium', 'firefox'])) {
  test(`${kind}: the coordinator's usage figures match the origin's own counter, pages left at once included`, { timeout: 240_000 }, async (t) => {
    const stack = await startStack({ coordinator: () => ({ usageFlushMs: 200 }) })
    const browser = await launchBrowser(kind)
    try {
      const site = stack.site.url
      const origin = new URL(site).origin
      /** the manifest's assets each page loads (as its markup names them) */
      const pageAssets = async (/** @type {string} */ path) => {
        const html = await (await fetch(site + path)).text()
        return Object.keys(stack.manifest.assets).filter((p) => html.includes(`"${p}"`))
      }
      const shopAssets = await pageAssets('/')
      const aboutAssets = await pageAssets('/about')
      assert.ok(shopAssets.length > 40 && aboutAssets.length === 2, `the shop names ${shopAssets.length} assets, /about ${aboutAssets.length}`)
      const before = await stack.originStats()

      /** @type {Set<string>[]} the assets each visitor loaded: over the network once each, from its store after */
      const loaded = []
      /** A visitor in a context of its own, browsing `paths` (each until its client is idle), then closing. */
      const visit = async (/** @type {string[]} */ paths, { stay = false } = {}) => {
        const context = await browser.newContext()
        const page = await context.newPage()
        const assets = new Set()
        loaded.push(assets)
        for (const path of paths) {
          await page.goto(site + path)
          await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
          for (const a of path === '/' ? shopAssets : aboutAssets) assets.add(a)
        }
        if (!stay) await context.close()
        return context
      }

      // A holds the shop's images and stays: the later visitors' shop pages get them from it.
      const a = await visit(['/about', '/'], { stay: true })
      // First views, left at once: closed, navigated away from.
      await visit(['/'])
      await visit(['/', '/about'])
      // Under the worker (second pages), with peers' bytes: left for another page, closed.
      await visit(['/about', '/', '/about'])
      await visit(['/about', '/'])
      // A first view with only the style sheet and script.
      await visit(['/about'])
      await a.close()

      const needed = loaded.reduce((n, assets) => n + [...assets].reduce((m, p) => m + stack.manifest.assets[p].size, 0), 0)
      const originAssets = async () => {
        const after = await stack.originStats()
        return Object.keys(stack.manifest.assets).reduce((n, p) => n + (after.byPath[p]?.bytes ?? 0) - (before.byPath[p]?.bytes ?? 0), 0)
      }
      const counted = await originAssets()
      const counterShare = 1 - counted / needed
      /** @returns {Promise<any>} the site's figures in /stats */
      const reported = async () => (await (await fetch(stack.coordinator.httpUrl + '/stats')).json()).usage?.[origin]
      // Reports of pages already gone keep arriving for a moment (the holder's last one, of what it served, as
      // it closes): wait until the origin's bytes, the peers' and what was served are all in, or the bound.
      let usage = await reported()
      for (const end = Date.now() + REPORTS_BOUND_MS; Date.now() < end && !(usage?.origin >= counted && usage.peer + usage.origin >= needed && usage.served >= usage.peer);) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        usage = await reported()
      }
      const figures = `origin counter: ${counted} asset bytes of ${needed} the pages needed (${pct(counterShare)} served by visitors); /stats: ${JSON.stringify(usage)}`
      t.diagnostic(`${kind}: ${figures}`)
      assert.ok(usage, `the site has figures in /stats (${figures})`)
      assert.ok(usage.peer > 0, `visitors served each other (${figures})`)
      assert.ok(Math.abs(usage.origin - counted) <= 0.03 * counted, `the origin bytes the pages reported are the origin's, within 3 % (${figures})`)
      assert.ok(Math.abs(usage.peerShare - counterShare) <= 0.03, `the share served by visitors is the origin counter's, within 3 points (${figures})`)
      assert.ok(Math.abs(usage.peer + usage.origin - needed) <= 0.03 * needed, `peer + origin bytes are what the pages needed, within 3 % (${figures})`)
      assert.ok(Math.abs(usage.served - usage.peer) <= 0.03 * usage.peer, `what visitors served is what visitors got from peers, within 3 % (${figures})`)
      const dashboard = await (await fetch(`${stack.coordinator.httpUrl}/usage?site=${encodeURIComponent(origin)}`)).json()
      assert.deepEqual({ ...dashboard.total, peerShare: dashboard.peerShare }, usage, '/usage (the dashboard\'s) says the same')
    } finally {
      await browser.close()
      await stack.close()
    }
  })
}

/** @param {number} share */
const pct = (share) => `${(share * 100).toFixed(1)} %`
