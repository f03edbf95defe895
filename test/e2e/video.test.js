/* global document -- used inside page.evaluate callbacks, which run in the browser */
/**
 * A `<video>` from another visitor, in real browsers (issue 26): a 10 MB
 * WebM, named in 1 MiB pieces by the manifest (its piece lists beside it, as
 * maygh-manifest writes them), plays and seeks in a visitor's page while
 * another visitor holds it; the element's range requests are answered by the
 * worker piece by piece from the holder, and the origin sends none of its
 * bytes. Chromium and Firefox each watch; the holder is Chromium.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../../client/build.js'
import { buildManifest, writePieceLists } from '../../client/manifest.js'
import { startCoordinator } from '../../coordinator/src/server.js'
import { launchBrowser } from '../support/browsers.js'
import { startStaticSite } from '../support/static-site.js'
import { makeVideo } from '../support/video.js'
import { PIECED_ABOVE } from '../../protocol/index.js'

const CLIP = '/media/clip.webm'

/** @type {string} */
let dir
/** @type {Awaited<ReturnType<typeof startCoordinator>>} */
let coordinator
/** @type {Awaited<ReturnType<typeof startStaticSite>>} */
let site

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maygh-video-'))
  await buildClient({ outdir: dir })
  await mkdir(join(dir, 'media'))
  await makeVideo(join(dir, CLIP), { seconds: 10, mbps: 8 })
  coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  // The origin is loopback, faster than any peer: the site waits for peers (as a site that prefers
  // savings does), so that the test sees the peers' path whatever the machine's pace.
  const tag = `<script src="/maygh.js" data-coordinator="${coordinator.url}" data-hedge="savings" async></script>`
  await writeFile(join(dir, 'about.html'), `<!doctype html><title>About</title>${tag}<p>About.</p>`)
  await writeFile(join(dir, 'watch.html'), `<!doctype html><title>Watch</title>${tag}<video id="v" src="${CLIP}" preload="auto" muted playsinline width="640" height="360"></video>`)
  const lists = new Map()
  const manifest = await buildManifest(dir, { lists })
  assert.ok(manifest.assets[CLIP].size > PIECED_ABOVE && manifest.assets[CLIP].pieces, 'the clip is named in pieces')
  await writeFile(join(dir, 'maygh-manifest.json'), JSON.stringify(manifest))
  await writePieceLists(dir, lists)
  site = await startStaticSite(dir)
})
after(async () => {
  await site?.close()
  await coordinator?.close()
  await rm(dir, { recursive: true, force: true })
})

/** @param {'chromium' | 'firefox'} kind */
async function visitor (kind) {
  const browser = await launchBrowser(kind)
  const tab = await (await browser.newContext()).newPage()
  await tab.addInitScript(() => {
    const told = /** @type {unknown[]} */ ([])
    Object.defineProperty(globalThis, '__loads', { value: told })
    navigator.serviceWorker?.addEventListener('message', (e) => { if (e.data?.maygh === 'loaded') told.push(e.data.e) })
  })
  const open = async (/** @type {string} */ path) => {
    await tab.goto(site.url + path)
    // Its worker in place, so that its next page is the worker's.
    await tab.evaluate(async () => { await navigator.serviceWorker.ready; await /** @type {any} */ (globalThis).Maygh.ready })
  }
  return { tab, open, close: () => browser.close() }
}

for (const kind of /** @type {const} */ (['chromium', 'firefox'])) {
  test(`${kind}: a video another visitor holds plays and seeks, every byte of it from that visitor`, { timeout: 120000 }, async () => {
    const a = await visitor('chromium')
    const b = await visitor(kind)
    try {
      // A holds the clip: its worker loaded it whole (a piece at a time, from the origin: nobody held it).
      await a.open('/about.html')
      await a.open('/about.html')
      const size = await a.tab.evaluate(async (clip) => (await (await fetch(clip)).arrayBuffer()).byteLength, CLIP)
      await a.tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
      await b.open('/about.html')
      const before = site.served.get(CLIP)?.bytes ?? 0
      await b.open('/watch.html')
      const played = await b.tab.evaluate(async () => {
        const v = /** @type {HTMLVideoElement} */ (document.getElementById('v'))
        const when = (/** @type {string} */ type) => new Promise((resolve, reject) => {
          v.addEventListener(type, resolve, { once: true })
          v.addEventListener('error', () => reject(new Error(`video error ${v.error?.code}: ${v.error?.message}`)), { once: true })
        })
        if (v.readyState < 3) await when('canplay')
        await v.play()
        while (v.currentTime < 1) await new Promise((resolve) => setTimeout(resolve, 50))
        v.pause()
        v.currentTime = 8
        await when('seeked')
        if (v.readyState < 3) await when('canplay')
        return { duration: v.duration, at: v.currentTime, ready: v.readyState, width: v.videoWidth }
      })
      assert.ok(played.duration > 9 && played.duration < 11, JSON.stringify(played))
      assert.ok(played.at >= 8 && played.ready >= 3 && played.width === 640, JSON.stringify(played))
      assert.equal((site.served.get(CLIP)?.bytes ?? 0) - before, 0, 'not a byte of the clip from the origin')
      const loads = /** @type {{ url: string, source: string, bytes: number }[]} */ (await b.tab.evaluate(() => /** @type {any} */ (globalThis).__loads))
      const clip = loads.filter((l) => l.url.endsWith(CLIP))
      assert.ok(clip.length > 0 && clip.every((l) => l.source === 'peer' || l.source === 'cache'), JSON.stringify(clip))
      assert.ok(clip.reduce((n, l) => n + (l.source === 'peer' ? l.bytes : 0), 0) <= size, 'no piece twice from the peer')
    } finally {
      await a.close()
      await b.close()
    }
  })
}
