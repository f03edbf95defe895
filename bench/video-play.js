#!/usr/bin/env node
/* global document -- used inside page.evaluate callbacks, which run in the browser */
/**
 * A 50 MB `<video>` with a holder online, and with nobody holding it yet,
 * against the same video from the origin alone (issue 26): real Chromium,
 * transparent mode at the client's defaults, the origin at +80 ms / 5 Mbit/s
 * (`bench/slow-origin.js`). First `--first` viewings by first visitors
 * (nobody holds the video: the worker streams it from the origin, keeping
 * its pieces) alternate with origin-only ones; then a holder's worker has the video whole (seeded at loopback speed: the link
 * is unpaced while it loads), and comes back in a new session before each
 * viewing (a session uploads 50 MB at most by default); then, the two kinds of visit alternating, a
 * fresh visitor opens a page, then the watch page, whose `<video autoplay
 * muted>` plays 8 s, seeks to the middle and plays 3 s more. Reported per
 * kind: time to first frame (navigation to the first `playing`), the seek
 * (from setting `currentTime` to `playing` again), stalls after the start
 * (`waiting` events), and the video bytes the origin sent (its own counter)
 * against those the element took.
 *
 *   node bench/video-play.js [--visits 4] [--first 2] [--mb 50] [--mbps 4] [--engine chromium|firefox]
 *
 * `--mbps` is the video's bit rate (below the origin's 5 Mbit/s, so that
 * the origin alone can play it without stalling). Needs ffmpeg (it makes the
 * video: scripts/install-system-deps.sh installs it). Run it inside the
 * loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/video-play.js
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildClient } from '../client/build.js'
import { buildManifest, writePieceLists } from '../client/manifest.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { launchBrowser } from '../test/support/browsers.js'
import { startStaticSite } from '../test/support/static-site.js'
import { makeVideo } from '../test/support/video.js'
import { startSlowOrigin } from './slow-origin.js'
import { upperPercentile } from './stats.js'

const { values } = parseArgs({ options: { visits: { type: 'string', default: '4' }, first: { type: 'string', default: '2' }, mb: { type: 'string', default: '50' }, mbps: { type: 'string', default: '4' }, engine: { type: 'string', default: 'chromium' } } })
const engine = /** @type {'chromium' | 'firefox'} */ (values.engine === 'firefox' ? 'firefox' : 'chromium')
const visits = Number(values.visits)
const firsts = Number(values.first)
const videoMbps = Number(values.mbps)
const seconds = Math.round(Number(values.mb) * 8 / videoMbps)
const RTT_MS = 80
const ORIGIN_MBPS = 5
const CLIP = '/media/clip.webm'

const dir = await mkdtemp(join(tmpdir(), 'maygh-video-'))
await buildClient({ outdir: dir })
await mkdir(join(dir, 'media'))
console.error(`video-play: making a ${seconds}-s video at ${videoMbps} Mbit/s`)
await makeVideo(join(dir, CLIP), { seconds, mbps: videoMbps })
const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
const tag = `<script src="/maygh.js" data-coordinator="${coordinator.url}" async></script>`
const video = `<video id="v" src="${CLIP}" autoplay muted playsinline preload="auto" width="640" height="360"></video>`
await writeFile(join(dir, 'about.html'), `<!doctype html><title>About</title>${tag}<p>About.</p>`)
await writeFile(join(dir, 'plain.html'), '<!doctype html><title>About</title><p>About.</p>')
await writeFile(join(dir, 'watch.html'), `<!doctype html><title>Watch</title>${tag}${video}`)
await writeFile(join(dir, 'watch-plain.html'), `<!doctype html><title>Watch</title>${video}`)
const lists = new Map()
const manifest = await buildManifest(dir, { lists })
const size = manifest.assets[CLIP].size
await writeFile(join(dir, 'maygh-manifest.json'), JSON.stringify(manifest))
await writePieceLists(dir, lists)
const site = await startStaticSite(dir)
const origin = await startSlowOrigin({ target: site.url, rttMs: RTT_MS, mbps: ORIGIN_MBPS })
const videoBytes = () => origin.sent.video ?? 0

/** A visitor with its own browser (its own worker and store). */
async function visitor () {
  const browser = await launchBrowser(engine)
  const tab = await (await browser.newContext()).newPage()
  return { browser, tab }
}

/**
 * One viewing: the page, then the watch page, timed in the page.
 * @param {boolean} maygh
 */
async function watch (maygh) {
  const { browser, tab } = await visitor()
  try {
    await tab.goto(origin.url + (maygh ? '/about.html' : '/plain.html'))
    // Its worker in place: the watch page is its (transparent mode's second page on).
    if (maygh) await tab.evaluate(async () => { await navigator.serviceWorker.ready; await /** @type {any} */ (globalThis).Maygh.idle() })
    const before = videoBytes()
    await tab.addInitScript(() => {
      const w = /** @type {any} */ (globalThis)
      w.watched = { firstFrame: null, stalls: 0 }
      document.addEventListener('playing', () => { w.watched.firstFrame ??= performance.now() }, true)
    })
    await tab.goto(origin.url + (maygh ? '/watch.html' : '/watch-plain.html'))
    const r = await tab.evaluate(async () => {
      const w = /** @type {any} */ (globalThis)
      const v = /** @type {HTMLVideoElement} */ (document.getElementById('v'))
      const next = (/** @type {string} */ type) => new Promise((resolve) => v.addEventListener(type, resolve, { once: true }))
      while (w.watched.firstFrame === null) await new Promise((resolve) => setTimeout(resolve, 20))
      v.addEventListener('waiting', () => { w.watched.stalls++ })
      while (v.currentTime < 8) await new Promise((resolve) => setTimeout(resolve, 50))
      const t0 = performance.now()
      const playing = next('playing')
      v.currentTime = v.duration / 2
      await playing
      const seekMs = performance.now() - t0
      const from = v.currentTime
      while (v.currentTime < from + 3) await new Promise((resolve) => setTimeout(resolve, 50))
      v.pause()
      return { firstFrameMs: Math.round(w.watched.firstFrame), seekMs: Math.round(seekMs), stalls: w.watched.stalls }
    })
    const stats = maygh ? await tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()) : null
    return { ...r, originVideoBytes: videoBytes() - before, peerBytes: stats?.peer.bytes ?? 0, errors: stats?.errors ?? {} }
  } finally {
    await browser.close()
  }
}

/** @type {{ origin: Awaited<ReturnType<typeof watch>>[], maygh: Awaited<ReturnType<typeof watch>>[], first: Awaited<ReturnType<typeof watch>>[] }} */
const runs = { origin: [], maygh: [], first: [] }
let holder
try {
  for (let i = 0; i < firsts; i++) {
    for (const maygh of i % 2 === 0 ? [false, true] : [true, false]) {
      const r = await watch(maygh)
      runs[maygh ? 'first' : 'origin'].push(r)
      console.error(`video-play: first visitor ${i + 1}, ${maygh ? 'nobody holds it' : 'origin only'}: ${JSON.stringify(r)}`)
    }
  }
  // The holder loads the video whole through its worker, the link unpaced meanwhile.
  const { rttMs, bytesPerMs } = origin.link
  Object.assign(origin.link, { rttMs: 0, bytesPerMs: Infinity })
  holder = await visitor()
  await holder.tab.goto(origin.url + '/about.html')
  await holder.tab.evaluate(() => navigator.serviceWorker.ready)
  await holder.tab.goto(origin.url + '/about.html')
  const got = await holder.tab.evaluate(async (clip) => (await (await fetch(clip)).arrayBuffer()).byteLength, CLIP)
  await holder.tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
  if (got !== size) throw new Error(`the holder got ${got} bytes of ${size}`)
  const stored = await holder.tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats().stored.bytes)
  if (stored !== size) throw new Error(`the holder stored ${stored} bytes of ${size}`)
  Object.assign(origin.link, { rttMs, bytesPerMs })
  for (let i = 0; i < visits; i++) {
    for (const maygh of i % 2 === 0 ? [false, true] : [true, false]) {
      // The holder comes back in a new session (a new tab: its session's upload budget, 50 MB by
      // default, starts again; its store and worker are the browser's) before each viewing.
      if (maygh) {
        const tab = await holder.tab.context().newPage()
        await tab.goto(origin.url + '/about.html')
        await tab.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
        await holder.tab.close()
        holder.tab = tab
      }
      const r = await watch(maygh)
      runs[maygh ? 'maygh' : 'origin'].push(r)
      console.error(`video-play: visit ${i + 1}, ${maygh ? 'holder online' : 'origin only'}: ${JSON.stringify(r)}`)
    }
  }
} finally {
  await holder?.browser.close()
  await origin.close()
  await site.close()
  await coordinator.close()
  await rm(dir, { recursive: true, force: true })
}
const sum = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0)
// The upper median (bench/stats.js): the README's figures (2 first visitors) were printed with it.
const m = (/** @type {'origin' | 'maygh' | 'first'} */ k, /** @type {'firstFrameMs' | 'seekMs'} */ f) => upperPercentile(runs[k].map((r) => r[f]), 0.5)
console.log(JSON.stringify({
  engine,
  videoMb: +(size / 1e6).toFixed(1),
  seconds,
  origin: `+${RTT_MS} ms, ${ORIGIN_MBPS} Mbit/s`,
  visits,
  firstFrameMs: { origin: m('origin', 'firstFrameMs'), maygh: m('maygh', 'firstFrameMs'), ratio: +(m('maygh', 'firstFrameMs') / m('origin', 'firstFrameMs')).toFixed(2), first: runs.first.length ? m('first', 'firstFrameMs') : null, firstRatio: runs.first.length ? +(m('first', 'firstFrameMs') / m('origin', 'firstFrameMs')).toFixed(2) : null },
  seekMs: { origin: m('origin', 'seekMs'), maygh: m('maygh', 'seekMs'), ratio: +(m('maygh', 'seekMs') / m('origin', 'seekMs')).toFixed(2), first: runs.first.length ? m('first', 'seekMs') : null, firstRatio: runs.first.length ? +(m('first', 'seekMs') / m('origin', 'seekMs')).toFixed(2) : null },
  stalls: { origin: sum(runs.origin.map((r) => r.stalls)), maygh: sum(runs.maygh.map((r) => r.stalls)), first: sum(runs.first.map((r) => r.stalls)) },
  // Of the video bytes the holder-online visits took, the share that did not come from the origin.
  fromPeers: +(1 - sum(runs.maygh.map((r) => r.originVideoBytes)) / Math.max(1, sum(runs.maygh.map((r) => r.originVideoBytes + r.peerBytes)))).toFixed(3),
  originVideoBytes: { origin: sum(runs.origin.map((r) => r.originVideoBytes)), maygh: sum(runs.maygh.map((r) => r.originVideoBytes)) },
  runs
}, null, 2))
