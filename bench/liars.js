#!/usr/bin/env node
/* global RTCDataChannel, RTCPeerConnection, HTMLImageElement -- used inside page callbacks, which run in the browser */
/**
 * Lying peers against the shop, in real Chromium on loopback: how much slower
 * the shop's images are with three liars online among honest holders, and to
 * how many visitors each liar is handed before the coordinator quarantines it.
 *
 * Two phases in one run, each on a fresh stack (coordinator with join tokens
 * and `reportThreshold`, the demo shop, one Chromium): "no liars" and "three
 * liars". Three honest holders visit first and stay open; in the liar phase
 * three more visitors load the shop (so they announce every image), then lie:
 * one corrupts the first binary frame of every reply, one answers every `get`
 * with `miss`, one never lets a channel open (its setRemoteDescription never
 * settles: offers to it wait out connectTimeoutMs). Then `--visitors`
 * measured visitors come one after another, each a fresh context with a
 * token of its own visitor name, and stay open; with `--visitors-leave` each
 * closes once measured. Which matters: a lookup ranks never-chosen holder
 * entries first, so a visitor that stays is the one the next is handed
 * first, and a liar meets a visitor only while it is the newest holder; with
 * visitors leaving, the six holders take turns. Per visitor: every image's
 * load time (`Maygh.on('load')`'s `ms`) and the time from navigation to the
 * last image shown. The coordinator is watched in process: who sent each liar
 * an offer (`relay.deliverLocal`), whose lookups named it
 * (`Introductions#add`), its reports and its quarantine.
 *
 * Prints one JSON line; exits 1 only when something broke (an image not
 * shown, a helper failing), 2 past `--max-seconds`. Run it inside the
 * loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/liars.js
 */
import { parseArgs } from 'node:util'
import { signJoinToken } from '../coordinator/src/join-token.js'
import { Introductions } from '../coordinator/src/introductions.js'
import { startStack, launchBrowser, openWithToken, images, corruptReplies } from '../test/support/browsers.js'
import { percentile } from './stats.js'

const HELP = `usage: node bench/liars.js [options]

  --visitors N      measured visitors per phase, one after another (default 15)
  --skip N          first measured visitors left out of the headline figures (default 6: the
                    visitors a threshold of 3 needs to quarantine all three liars, as each
                    run's quarantinedAt shows; the README gives the figure with 5 as well)
  --threshold N     the coordinator's reportThreshold (default 3)
  --order ORDER     no-liars-first (default) or liars-first
  --visitors-leave  each measured visitor closes its page once measured (default: stays open)
  --max-seconds N   give up (exit 2) after this long (default 600)
  --help            this text

Prints one JSON line: per phase p50/p95 of per-image load time and of visit
time over the measured visitors after --skip; per liar the measured visitors
that offered it a connection (handedTo), whose lookups named it (listedTo),
its reports, and at which visitor it was quarantined.`

const SECRET = 'bench-liars-secret-of-at-least-32-characters'
const HOLDERS = 3
/** @typedef {'corrupt' | 'miss' | 'no_channel'} LiarKind */
/** @type {LiarKind[]} */
const LIAR_KINDS = ['corrupt', 'miss', 'no_channel']

const { values } = parseArgs({
  options: {
    visitors: { type: 'string', default: '15' },
    skip: { type: 'string', default: '6' },
    threshold: { type: 'string', default: '3' },
    order: { type: 'string', default: 'no-liars-first' },
    'visitors-leave': { type: 'boolean', default: false },
    'max-seconds': { type: 'string', default: '600' },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  console.log(HELP)
  process.exit(0)
}
/**
 * @param {string} name
 * @param {number} min
 * @param {number} max
 */
function intFlag (name, min, max) {
  const n = Number(/** @type {Record<string, unknown>} */ (values)[name])
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer from ${min} to ${max}\n\n${HELP}`)
    process.exit(1)
  }
  return n
}
const visitors = intFlag('visitors', 1, 200)
const skip = intFlag('skip', 0, visitors - 1)
const threshold = intFlag('threshold', 1, 1000)
const maxSeconds = intFlag('max-seconds', 10, 86_400)
if (values.order !== 'no-liars-first' && values.order !== 'liars-first') {
  console.error(`--order must be no-liars-first or liars-first\n\n${HELP}`)
  process.exit(1)
}

const started = Date.now()
const deadline = started + maxSeconds * 1000
// Playwright kills the browsers it launched when the process exits.
setTimeout(() => {
  console.error(`liars: gave up after --max-seconds ${maxSeconds}`)
  process.exit(2)
}, maxSeconds * 1000).unref()
const remainingMs = () => Math.max(1000, deadline - Date.now())

/** What a page under measurement records: the client's load events and when each image was shown. */
function instrumentPage () {
  const bench = { loads: /** @type {{ url: string, source: string, ms: number }[]} */ ([]), shown: new WeakMap() }
  Object.defineProperty(globalThis, '__liarsBench', { value: bench })
  // The client defines `Maygh` and starts its loads in one synchronous run:
  // subscribing as it is defined is the only way to see every load event.
  const define = Object.defineProperty
  const object = /** @type {any} */ (Object)
  object.defineProperty = function (/** @type {any} */ target, /** @type {PropertyKey} */ key, /** @type {PropertyDescriptor} */ descriptor) {
    const result = define(target, key, descriptor)
    if (target === globalThis && key === 'Maygh') {
      object.defineProperty = define
      descriptor.value.on('load', (/** @type {any} */ e) => bench.loads.push({ url: e.url, source: e.source, ms: e.ms }))
    }
    return result
  }
  document.addEventListener('load', (e) => {
    if (e.target instanceof HTMLImageElement && e.target.dataset.mayghSrc) bench.shown.set(e.target, performance.now())
  }, true)
}

/** @returns {number | false} ms from navigation to the last image shown, once every one is */
function allShown () {
  const bench = /** @type {any} */ (globalThis).__liarsBench
  const imgs = [...document.querySelectorAll('img[data-maygh-src]')]
  let last = 0
  for (const el of imgs) {
    const img = /** @type {HTMLImageElement} */ (el)
    const at = bench?.shown.get(img)
    if (!img.complete || img.naturalWidth === 0 || at === undefined) return false
    last = Math.max(last, at)
  }
  return imgs.length > 0 && last
}

/**
 * The liars' patches, applied to their pages after they loaded the shop
 * (the corrupting one is test/support's, as the e2e scenarios use it).
 * @type {Record<LiarKind, (page: import('playwright-core').Page) => Promise<void>>}
 */
const PATCHES = {
  corrupt: (page) => corruptReplies(page),
  /** Answer every `get` with `miss` (the `ok` header becomes a miss, its binary frames are dropped). */
  miss: (page) => page.evaluate(() => {
    const send = RTCDataChannel.prototype.send
    let dropping = false
    RTCDataChannel.prototype.send = function (/** @type {any} */ data) {
      if (typeof data === 'string') {
        const msg = JSON.parse(data)
        dropping = msg.t === 'ok'
        if (dropping) data = JSON.stringify({ t: 'miss', id: msg.id })
      } else if (dropping) return
      return send.call(this, data)
    }
  }),
  /** Never let a new connection open: an offer's remote description never settles, so no answer goes back. */
  no_channel: (page) => page.evaluate(() => {
    /** @type {any} */ (RTCPeerConnection.prototype).setRemoteDescription = () => new Promise(() => {})
  })
}

/**
 * What the coordinator did about each liar, watched in process.
 * @typedef {{ id: string, kind: LiarKind, offersFrom: Map<string, number>, listedFrom: Map<string, number>,
 *   reports: Record<string, number>, reporters: Set<string>, quarantinedAt: number | null }} LiarWatch
 */
/** @type {{ coordinator: import('../coordinator/src/server.js').Coordinator, liars: Map<string, LiarWatch>, visitor: number } | null} */
let watching = null
// Lookups name holders to the asker by introducing them (lookup.js); an Introductions does not know its session, the coordinator's map does.
const introduce = Introductions.prototype.add
Introductions.prototype.add = function (peer, now, looked) {
  const liar = watching?.liars.get(peer)
  if (liar && looked && watching) {
    for (const session of watching.coordinator.sessions.values()) {
      if (session.introductions === this && session.peerId !== null && !liar.listedFrom.has(session.peerId)) liar.listedFrom.set(session.peerId, watching.visitor)
    }
  }
  return introduce.call(this, peer, now, looked)
}

/**
 * Watch offers to, reports of and the quarantine of `liars` on `coordinator`.
 * @param {import('../coordinator/src/server.js').Coordinator} coordinator
 * @param {{ id: string, kind: LiarKind }[]} liars
 */
function watchLiars (coordinator, liars) {
  const { relay, quarantine } = coordinator
  if (!relay || !quarantine) throw new Error('coordinator not started')
  const watch = {
    coordinator, visitor: 0, liars: new Map(liars.map(({ id, kind }) => [id, /** @type {LiarWatch} */ ({ id, kind, offersFrom: new Map(), listedFrom: new Map(), reports: {}, reporters: new Set(), quarantinedAt: null })]))
  }
  const deliver = relay.deliverLocal.bind(relay)
  relay.deliverLocal = (to, from, signal) => {
    const liar = watch.liars.get(to)
    if (liar && /** @type {any} */ (signal).sdp?.type === 'offer' && !liar.offersFrom.has(from)) liar.offersFrom.set(from, watch.visitor)
    return deliver(to, from, signal)
  }
  const accuse = quarantine.accuse.bind(quarantine)
  quarantine.accuse = (peer, reporter, reason, hash) => {
    const liar = watch.liars.get(peer)
    if (liar) {
      liar.reports[reason] = (liar.reports[reason] ?? 0) + 1
      liar.reporters.add(reporter)
    }
    return accuse(peer, reporter, reason, hash)
  }
  const isolate = quarantine.isolate.bind(quarantine)
  quarantine.isolate = (session) => {
    const liar = watch.liars.get(session.peerId ?? '')
    if (liar && liar.quarantinedAt === null) liar.quarantinedAt = watch.visitor
    return isolate(session)
  }
  watching = watch
  return watch
}

/**
 * A measured visitor: a fresh context whose page carries `token` (returned open).
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 * @param {string} token
 */
async function measureVisit (browser, url, token) {
  const context = await browser.newContext({ permissions: ['local-network-access'] })
  context.setDefaultTimeout(remainingMs())
  await context.addInitScript(instrumentPage)
  const page = await context.newPage()
  await page.route(url, async (route) => {
    const response = await route.fetch()
    const html = await response.text()
    await route.fulfill({ response, body: html.replace('<script src="/maygh.js"', `<script src="/maygh.js" data-token="${token}"`) })
  })
  await page.goto(url, { waitUntil: 'commit' })
  const visitMs = /** @type {number} */ (await (await page.waitForFunction(allShown, undefined, { polling: 50 })).jsonValue())
  await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
  const shown = await images(page)
  const blank = shown.filter((img) => img.width === 0)
  if (blank.length > 0) throw new Error(`${blank.length} images not shown, e.g. ${blank[0].url}`)
  const urls = new Set(shown.map((img) => img.url))
  /** @type {{ url: string, source: string, ms: number }[]} */
  const loads = (await page.evaluate(() => /** @type {any} */ (globalThis).__liarsBench.loads)).filter((/** @type {{ url: string }} */ e) => urls.has(e.url))
  const stats = await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
  return { context, visitMs, loads, stats }
}

/**
 * The nearest-rank percentile (bench/stats.js) in ms to 0.1.
 * @param {number[]} xs
 * @param {number} q in (0, 1]
 */
const percentileMs = (xs, q) => xs.length === 0 ? null : round(percentile(xs, q))
const round = (/** @type {number} */ ms) => Math.round(ms * 10) / 10

/**
 * One phase on a fresh stack.
 * @param {'noLiars' | 'liars'} name
 */
async function runPhase (name) {
  const stack = await startStack({ coordinator: (siteOrigin) => ({ allowedOrigins: [siteOrigin], tokenSecrets: [SECRET], reportThreshold: threshold }) })
  const browser = await launchBrowser('chromium')
  const url = stack.shop
  const origin = new URL(stack.site.url).origin
  const token = (/** @type {string} */ visitor) => signJoinToken({ origin, visitor }, SECRET)
  try {
    for (let i = 1; i <= HOLDERS; i++) {
      const holder = await openWithToken(browser, url, token(`${name}-holder-${i}`))
      const shown = await images(holder.page)
      const { held } = await holder.stats()
      if (shown.some((img) => img.width === 0) || held < shown.length) throw new Error(`holder ${i}: ${held} of ${shown.length} images held`)
    }
    /** @type {{ id: string, kind: LiarKind }[]} */
    const liars = []
    if (name === 'liars') {
      // All load (and announce) honestly first, so that none is handed another one's lies.
      const pages = []
      for (const kind of LIAR_KINDS) {
        const liar = await openWithToken(browser, url, token(`${name}-liar-${kind}`))
        const { held, peerId } = await liar.stats()
        if (held < (await images(liar.page)).length) throw new Error(`liar ${kind} holds only ${held} images`)
        pages.push(liar.page)
        liars.push({ id: peerId, kind })
      }
      for (const [i, page] of pages.entries()) {
        await PATCHES[liars[i].kind](page)
        await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
      }
    }
    const watch = watchLiars(stack.coordinator, liars)
    const visits = []
    for (let i = 1; i <= visitors; i++) {
      watch.visitor = i
      const visit = await measureVisit(browser, url, token(`${name}-visitor-${i}`))
      visits.push({ ...visit, index: i })
      if (values['visitors-leave']) await visit.context.close()
    }
    watch.visitor = visitors + 1
    return summarize(visits, [...watch.liars.values()], stack.coordinator)
  } finally {
    watching = null
    await browser.close()
    await stack.close()
  }
}

/**
 * @param {{ index: number, visitMs: number, loads: { source: string, ms: number }[], stats: any }[]} visits
 * @param {LiarWatch[]} liars
 * @param {import('../coordinator/src/server.js').Coordinator} coordinator
 */
function summarize (visits, liars, coordinator) {
  const later = visits.slice(skip)
  const imageMs = later.flatMap((v) => v.loads.map((e) => e.ms))
  const visitMs = later.map((v) => v.visitMs)
  /** @type {Record<string, number>} */
  const sources = {}
  for (const e of later.flatMap((v) => v.loads)) sources[e.source] = (sources[e.source] ?? 0) + 1
  /** @type {Record<string, number>} */
  const errors = {}
  for (const v of visits) for (const [code, n] of Object.entries(v.stats.errors)) errors[code] = (errors[code] ?? 0) + /** @type {number} */ (n)
  const measured = new Map(visits.map((v) => [v.stats.peerId, v.index]))
  /** @param {Map<string, number>} from peers → the visitor being measured then */
  const byVisitor = (from) => [...from.keys()].filter((id) => measured.has(id)).map((id) => /** @type {number} */ (measured.get(id))).sort((a, b) => a - b)
  const summary = {
    p95ImageMs: percentileMs(imageMs, 0.95),
    p50ImageMs: percentileMs(imageMs, 0.5),
    maxImageMs: percentileMs(imageMs, 1),
    p95VisitMs: percentileMs(visitMs, 0.95),
    p50VisitMs: percentileMs(visitMs, 0.5),
    imageLoads: imageMs.length,
    firstVisitsP95ImageMs: percentileMs(visits.slice(0, skip).flatMap((v) => v.loads.map((e) => e.ms)), 0.95),
    visitMs: visits.map((v) => Math.round(v.visitMs)),
    sources,
    rejected: visits.reduce((n, v) => n + v.stats.rejected, 0),
    errors,
    // the visitors a peer failed: which, how long their visit took, and what failed them
    faultyVisits: visits.filter((v) => v.stats.rejected > 0 || Object.keys(v.stats.errors).length > 0)
      .map((v) => ({ visitor: v.index, visitMs: Math.round(v.visitMs), rejected: v.stats.rejected, errors: v.stats.errors }))
  }
  if (liars.length === 0) return summary
  const details = liars.map((l) => ({
    kind: l.kind,
    handedTo: byVisitor(l.offersFrom),
    listedTo: byVisitor(l.listedFrom),
    otherOffers: l.offersFrom.size - byVisitor(l.offersFrom).length,
    reports: l.reports,
    reporters: l.reporters.size,
    quarantined: coordinator.sessions.get(l.id)?.quarantined === true,
    quarantinedAtVisitor: l.quarantinedAt
  }))
  return { ...summary, handedTo: details.map((d) => d.handedTo.length), quarantined: details.map((d) => d.quarantined), liars: details }
}

try {
  const order = values.order === 'liars-first' ? /** @type {const} */ (['liars', 'noLiars']) : /** @type {const} */ (['noLiars', 'liars'])
  /** @type {Record<string, any>} */
  const result = {}
  for (const phase of order) result[phase] = await runPhase(phase)
  const { noLiars, liars } = result
  const p95Ratio = noLiars.p95ImageMs > 0 ? Math.round(liars.p95ImageMs / noLiars.p95ImageMs * 1000) / 1000 : null
  console.log(JSON.stringify({
    threshold,
    visitors,
    skip,
    order: values.order,
    visitorsLeave: values['visitors-leave'],
    noLiars,
    liars,
    p95Ratio,
    met: {
      p95Within1_2: p95Ratio !== null && p95Ratio <= 1.2,
      handedAtMostThreshold: liars.handedTo.every((/** @type {number} */ n) => n <= threshold)
    },
    seconds: Math.round((Date.now() - started) / 100) / 10
  }))
  process.exit(0)
} catch (err) {
  console.error('liars: failed:', err)
  process.exit(1)
}
