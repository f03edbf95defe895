#!/usr/bin/env node
/* global HTMLImageElement, RTCDataChannel, innerHeight, innerWidth, requestAnimationFrame -- used inside page callbacks, which run in the browser */
/**
 * Is a page with maygh ever slower than without, and what does it save the
 * origin? The demo shop behind a distant origin (bench/slow-origin.js: added
 * round trip, per-response bandwidth), peers and coordinator on loopback, real
 * Chromium (or Firefox, `--engine`). Per visit to the shop, from its navigation:
 * the time until every image in the first viewport (1280×720) shows, until all
 * of the shop's images do, and its largest contentful paint (the last
 * `largest-contentful-paint` entry once all images show; `n/a` where the
 * engine has no such entry); p50 and p95 over `--visits` fresh visitors per
 * scenario. Bytes, per scenario:
 *   origin share   image bytes the proxy sent for the measured shop loads
 *                  (counted at the origin, cut-short responses as far as they
 *                  went; not the transparent visitor's `/about`, not the
 *                  holders', which are idle by then) ÷ the shop's image bytes
 *                  (the manifest's sizes of the images the shop shows) per
 *                  visit; `peerOrStoreShare` = 1 − that
 *   peer share     what the visitors' own `Maygh.stats()` say came from peers,
 *                  ÷ peer + origin (client-reported, for comparison only)
 *   wasted share   bytes the holders counted as served during a visit
 *                  (`stats().served`, summed over the answering holders) that the
 *                  visitor did not count as received from peers (`peer.bytes`:
 *                  replies to cancelled requests, races the origin won), ÷ served
 *   udp            UDP datagrams the namespace received during the maygh
 *                  visits and those dropped by a full socket receive buffer
 *                  (Linux `/proc/net/snmp`): loopback's own losses (udpCounters)
 *
 * The machine's speed at the start and the end (`machine`, bench/machine-speed.js)
 * goes beside the figures: this machine's speed varies 2× from one day to the
 * next, and the peers' path costs CPU where the emulated origin's distance does not.
 * `--cpu-slowdown N` (Chromium) makes the measured visitor's device N times
 * slower, the same for its origin-only visits, whatever the machine's speed.
 *
 * Every scenario alternates its maygh visits with visits to the same pages
 * with the client's script tag removed (the origin-only run), so each ratio
 * compares visits made at the same time under the same load. The client runs
 * at its defaults unless `--hedge` names another preference (`data-hedge`).
 *
 * Modes: `transparent` (the shop at `/`, plain `<img src>`, maygh.js and its
 * worker) and `elements` (the shop at `/elements`, maygh-elements.js).
 * A transparent-mode visitor gets peers' bytes once the worker controls the
 * page, so there the measured visitors (and the origin-only ones) open
 * `/about` first and then the shop; an elements-mode visitor opens the shop
 * fresh. Scenarios, each on the mode's visitors:
 *   first    no holder online: every image from the origin
 *   newcomer --holders holders online, and the visitor opens the shop as its
 *            very first page of the site (transparent mode only: no worker
 *            controls that page yet, so it shows what peers serve of a first
 *            page's bytes, and that a newcomer pays nothing for them)
 *   holders  --holders visitors that loaded the shop are online
 *   down     the coordinator is unreachable (connections refused)
 *   silent   --holders holders online, one of them silent (its channels open, it never answers;
 *            its `served` counts bytes that never left, so it is left out of the wasted share)
 *   liar     --holders holders online, one of which never opens a channel (its page hides its
 *            ICE candidates and ignores the other side's, as behind a NAT nobody reaches)
 *
 * Targets (issue 23; bench/page-load-report.js TARGETS), p95 against the
 * origin-only visits: first visitor, viewport, all images and LCP ≤ 1.02×;
 * holders online, viewport ≤ 0.7×, LCP ≤ 1.0×, ≥ 95 % of the image bytes from
 * peers or the store (counted at the origin) and ≤ 5 % of the bytes holders
 * served wasted; coordinator down, a silent holder or one that never connects, viewport and LCP ≤ 1.02×.
 * `--profiles 0/10000` is an origin on loopback (the hardest case for peers).
 *
 *   node bench/page-load.js [--profiles 80/5,200/2] [--visits 20] [--holders 3]
 *     [--modes transparent,elements] [--scenarios first,newcomer,holders,down,silent,liar] [--max-seconds 3000]
 *     [--base DIR: an A/B in one run against another checkout, its visits alternating with this tree's]
 *
 * Run it inside the loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/page-load.js
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { launchBrowser, until } from '../test/support/browsers.js'
import { freePort } from '../test/support/redis-server.js'
import { medianTimeline, readTimeline, recordTimeline, timelineLine } from './page-timeline.js'
import { startSlowOrigin } from './slow-origin.js'
import { startDistantTcp } from './distant-tcp.js'
import { abRatios, printTable, summarize } from './page-load-report.js'
import { HEDGE_PREFERENCES } from '../policy/hedge-rule.js'
import { BUDGET_DEFAULTS } from '../policy/budgets.js'
import { machineSpeedSpan } from './machine-speed.js'
import { udpCounters } from './coordinator-load/procfs.js'
import { hideCandidates } from '../swarm/src/browser-visitor.js'

const HELP = `node bench/page-load.js [options]
  --profiles LIST   origin profiles, RTT_MS/MBIT_S, comma separated (default 80/5,200/2)
  --visits N        measured maygh visits per scenario, as many origin-only ones (default 20)
  --holders N       holders online in the newcomer, holders, silent and liar scenarios (default 3)
  --modes LIST      transparent, elements (default both)
  --scenarios LIST  first, newcomer, holders, down, silent, liar (default all)
  --max-seconds N   give up after this long (default 3000); a visit whose images have not all
                    shown within 60 s stops the run, saying which and what the worker said of each load
  --engine NAME     chromium (default) or firefox: the holders' and the visitors' browser
  --hedge NAME      the site's data-hedge: balanced (the client's default), latency or savings
  --coordinator-rtt MS  put the coordinator this far away (a round trip per request, two to open
                    a socket: bench/distant-tcp.js; default 0, on loopback)
  --timeline        also print where each scenario's time goes (median ms from navigation
                    of the script, hello, coordinator frames, first channel, images, LCP:
                    bench/page-timeline.js)
  --cpu-slowdown N  run each measured visitor's page N times slower (Chromium's CPU throttling,
                    as DevTools does: a low-end phone is about 4), the origin-only visits alike
                    (default 1: the machine's own speed)
  --per-visit       also print one JSON line per visit (scenario, kind, its times, the image
                    bytes the origin sent, the UDP datagrams received and dropped by full
                    receive buffers, the first viewport's last image to show with its timing
                    and what the worker said of its load, and the page's requests on its data
                    channels: channel, hash, KB, when asked and when its last byte came; its
                    timeline with --timeline): the tails behind a p95
  --base DIR        an A/B in one run: DIR is another checkout of this repository (a git worktree
                    of the commit before, say); each scenario's maygh visits alternate between
                    DIR's client, coordinator and demo site and this tree's, each with its own
                    holders and distant origin, in the same browsers, so that what else the
                    machine does falls on both alike (the origin-only visits alternate between
                    the two stacks too); prints a third table, this tree's p50 and
                    p95 against DIR's with the 90% interval each ratio falls in by chance alone
                    (a bootstrap of the visits: one that holds 1 shows no difference; A/A runs
                    read this tree's side 3-8% sooner at p50, so run a small gain both ways,
                    from DIR with --base this tree: README), and puts
                    DIR's figures under \`base\` in the JSON

Prints two tables per profile and one JSON line: per mode and scenario the
p50/p95 time until the viewport's images show, until all images do, and the
largest contentful paint (n/a where the engine has none), for maygh and for the
origin-only visits made alongside, and their p95 ratios; then the shop's image
bytes the origin sent per visit (counted at the origin) and the share peers or
the store saved it, the share the clients say came from peers, the share of
the holders' uploads the visitors threw away, and the targets met.`

const MODES = /** @type {const} */ (['transparent', 'elements'])
const SCENARIOS = /** @type {const} */ (['first', 'newcomer', 'holders', 'down', 'silent', 'liar'])
/** @typedef {typeof MODES[number]} Mode */
/** @typedef {typeof SCENARIOS[number]} Scenario */
/** What the proxy serves a page as: untouched, without the client, or with a coordinator that refuses. */
/** @typedef {'maygh' | 'none' | 'down'} Variant */

const { values } = parseArgs({
  options: {
    profiles: { type: 'string', default: '80/5,200/2' },
    visits: { type: 'string', default: '20' },
    holders: { type: 'string', default: '3' },
    modes: { type: 'string', default: MODES.join(',') },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    'max-seconds': { type: 'string', default: '3000' },
    engine: { type: 'string', default: 'chromium' },
    hedge: { type: 'string', default: 'balanced' },
    timeline: { type: 'boolean', default: false },
    'coordinator-rtt': { type: 'string', default: '0' },
    'per-visit': { type: 'boolean', default: false },
    'cpu-slowdown': { type: 'string', default: '1' },
    base: { type: 'string' },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  console.log(HELP)
  process.exit(0)
}
/** @param {string} message @returns {never} */
function usage (message) {
  console.error(`${message}\n\n${HELP}`)
  process.exit(1)
}
/** @param {'visits' | 'holders' | 'max-seconds' | 'coordinator-rtt' | 'cpu-slowdown'} name @param {number} min @param {number} max */
function intFlag (name, min, max) {
  const n = Number(values[name])
  if (!Number.isInteger(n) || n < min || n > max) usage(`--${name} must be an integer from ${min} to ${max}`)
  return n
}
/**
 * @template {string} T
 * @param {'modes' | 'scenarios' | 'engine' | 'hedge'} name
 * @param {readonly T[]} allowed
 * @returns {T[]}
 */
function listFlag (name, allowed) {
  const list = String(values[name]).split(',').map((s) => s.trim())
  for (const s of list) if (!allowed.includes(/** @type {T} */ (s))) usage(`--${name}: unknown ${s}; one of ${allowed.join(', ')}`)
  return /** @type {T[]} */ (list)
}
const visits = intFlag('visits', 1, 500)
const holderCount = intFlag('holders', 1, 20)
const maxSeconds = intFlag('max-seconds', 10, 86_400)
const modes = listFlag('modes', MODES)
const scenarios = listFlag('scenarios', SCENARIOS)
const engine = /** @type {'chromium' | 'firefox'} */ (listFlag('engine', /** @type {const} */ (['chromium', 'firefox']))[0])
const hedge = listFlag('hedge', HEDGE_PREFERENCES)[0]
const timeline = values.timeline === true
const coordinatorRtt = intFlag('coordinator-rtt', 0, 5000)
const perVisit = values['per-visit'] === true
const cpuSlowdown = intFlag('cpu-slowdown', 1, 20)
if (cpuSlowdown > 1 && engine !== 'chromium') usage('--cpu-slowdown needs --engine chromium (Firefox has no CPU throttling to drive)')
/** this checkout, and the one --base names (null: no A/B) */
const here = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const baseDir = values.base === undefined ? null : resolve(values.base)
if (baseDir !== null && !existsSync(join(baseDir, 'client', 'build.js'))) usage(`--base: ${baseDir} is not a checkout of this repository (no client/build.js)`)
/** the shop's script tag: the client's defaults, or the preference asked for */
/** @type {Record<string, string>} */
const clientData = hedge === HEDGE_PREFERENCES[0] ? {} : { hedge }
/** a new visitor's context (Chromium asks for Local Network Access to the loopback coordinator; a user would grant it) */
const contextOptions = engine === 'chromium' ? { permissions: ['local-network-access'] } : {}
const profiles = String(values.profiles).split(',').map((p) => {
  const [rttMs, mbps] = p.split('/').map(Number)
  if (!(rttMs >= 0 && rttMs <= 5000 && mbps > 0 && mbps <= 10_000)) usage(`--profiles: ${p} is not RTT_MS/MBIT_S`)
  return { rttMs, mbps }
})

const started = Date.now()
// Playwright kills the browsers it launched when the process exits.
setTimeout(() => {
  console.error(`page-load: gave up after --max-seconds ${maxSeconds}`)
  process.exit(2)
}, maxSeconds * 1000).unref()

/**
 * Runs in each measured page before its own scripts: when each image fired
 * `load`, the page's largest contentful paint so far (null: none yet, or
 * the engine has no such entry), and `allShown`, which resolves once every one
 * of the shop's images shows. Nothing polls the page meanwhile: a poll that
 * measured the images' places forced a layout of the page as it loaded (and
 * Playwright's waitForFunction compiled its own script into it, 80 ms of the
 * main thread on this machine), which held up its scripts, maygh's included.
 */
function instrumentPage () {
  /** @type {WeakMap<HTMLImageElement, number>} */
  const shown = new WeakMap()
  const lcp = {
    supported: (PerformanceObserver.supportedEntryTypes ?? []).includes('largest-contentful-paint'),
    /** @type {number | null} */
    last: null,
    /** @type {Element | null} the last entry's element */
    element: null,
    /** @type {PerformanceObserver | null} */
    observer: null
  }
  if (lcp.supported) {
    /** @param {PerformanceEntryList} entries */
    const take = (entries) => {
      if (!entries.length) return
      const last = /** @type {PerformanceEntry & { element?: Element | null }} */ (entries[entries.length - 1])
      lcp.last = last.startTime
      lcp.element = last.element ?? null
    }
    lcp.observer = new PerformanceObserver((list) => take(list.getEntries()))
    lcp.observer.observe({ type: 'largest-contentful-paint', buffered: true })
  }
  /** @type {() => void} */
  let done = () => {}
  const allShown = new Promise((resolve) => { done = () => resolve(undefined) })
  const check = () => {
    if (document.readyState === 'loading') return
    const imgs = /** @type {HTMLImageElement[]} */ ([...document.querySelectorAll('main img')])
    if (imgs.length && imgs.every((img) => shown.has(img) && img.complete && img.naturalWidth > 0)) done()
  }
  /** @type {Record<string, unknown>[]} what the service worker said of each load it made for the page (`loaded`: stats.js) */
  const loads = []
  navigator.serviceWorker?.addEventListener('message', (e) => {
    if (e.data?.maygh === 'loaded') loads.push({ ...e.data.e, at: Math.round(performance.now()) })
  })
  /** @param {Element} img whether it lies in the first viewport */
  const inViewport = (img) => {
    const r = img.getBoundingClientRect()
    return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth
  }
  Object.defineProperty(globalThis, '__pageLoadBench', { value: { shown, lcp, allShown, loads, inViewport } })
  document.addEventListener('load', (e) => {
    if (!(e.target instanceof HTMLImageElement)) return
    shown.set(e.target, performance.now())
    check()
  }, true)
  document.addEventListener('DOMContentLoaded', check)
}

/**
 * In the page, once all images show: the last largest-contentful-paint
 * entry's start time, after two frames (the last image's paint has been
 * reported by then); null where the engine has no such entry or reported none.
 * @returns {Promise<number | null>}
 */
async function largestPaint () {
  const { lcp } = /** @type {any} */ (globalThis).__pageLoadBench
  if (!lcp.supported) return null
  for (let i = 0; i < 2; i++) await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))
  const pending = lcp.observer.takeRecords()
  if (pending.length) {
    lcp.last = pending[pending.length - 1].startTime
    lcp.element = pending[pending.length - 1].element ?? null
  }
  return lcp.last === null ? null : Math.round(lcp.last)
}

/**
 * In the page, once all have shown: ms from navigation until the last of the
 * shop's images (those in the first viewport, or all) showed; false before.
 * @param {boolean} viewportOnly
 * @returns {number | false}
 */
function shownBy (viewportOnly) {
  const { shown, inViewport } = /** @type {{ shown: WeakMap<HTMLImageElement, number>, inViewport: (img: Element) => boolean }} */ (/** @type {any} */ (globalThis).__pageLoadBench)
  const imgs = /** @type {HTMLImageElement[]} */ ([...document.querySelectorAll('main img')])
  const wanted = viewportOnly ? imgs.filter(inViewport) : imgs
  let last = 0
  for (const img of wanted) {
    const at = shown.get(img)
    if (!img.complete || img.naturalWidth === 0 || at === undefined) return false
    last = Math.max(last, at)
  }
  return wanted.length > 0 && document.readyState !== 'loading' && last
}

/** A visit whose images have not all shown by then (or whose pages are not idle by then) stops the bench, saying what it waited for (ms). */
const VISIT_MS = 60_000

/**
 * `waiting`, or an error saying what `diagnose` finds once VISIT_MS have passed
 * (the run then ends: page-load exits on it).
 * @template T
 * @param {Promise<T>} waiting
 * @param {() => Promise<string>} diagnose
 * @returns {Promise<T>}
 */
async function withinVisit (waiting, diagnose) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  const late = new Promise((resolve) => { timer = setTimeout(resolve, VISIT_MS) }).then(async () => { throw new Error(`page-load: ${await diagnose()}`) })
  try {
    return await Promise.race([waiting, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Resolves once the coordinator lists as holding something exactly the
 * side's holders; an error saying what it lists after VISIT_MS.
 * @param {{ holding: () => number, holders: unknown[], sessions: () => object[] }} side
 * @param {string} when
 */
const holdersOnly = (side, when) => withinVisit(until(async () => side.holding() === side.holders.length),
  async () => `${when}, the coordinator lists ${side.holding()} sessions holding assets, not the ${side.holders.length} holders: ${JSON.stringify(side.sessions())}`)

/**
 * In the page: the shop's images not shown yet, and what the service worker said of each load it made.
 * @returns {{ pending: string[], loads: unknown[] }}
 */
function notShown () {
  const { shown, loads } = /** @type {any} */ (globalThis).__pageLoadBench
  const imgs = /** @type {HTMLImageElement[]} */ ([...document.querySelectorAll('main img')])
  return { pending: imgs.filter((img) => !shown.has(img) || !img.complete).map((img) => img.currentSrc || img.src), loads }
}

/**
 * In the page, once all have shown: the first viewport's last image to show
 * (`--per-visit`: what held a slow visit up), with its resource timing (ms from
 * navigation) and what the worker said of its load (source, peer, why the
 * origin was asked, its ms).
 * @returns {Record<string, unknown> | null}
 */
function lastInViewport () {
  const { shown, loads, inViewport } = /** @type {any} */ (globalThis).__pageLoadBench
  const imgs = /** @type {HTMLImageElement[]} */ ([...document.querySelectorAll('main img')]).filter(inViewport)
  const last = imgs.reduce((a, b) => (shown.get(b) ?? 0) > (shown.get(a) ?? 0) ? b : a, imgs[0])
  if (!last) return null
  const url = last.currentSrc
  const t = /** @type {PerformanceResourceTiming | undefined} */ (performance.getEntriesByName(url)[0])
  const load = loads.find((/** @type {{ url: string }} */ l) => l.url === url)
  return {
    path: new URL(url).pathname,
    shown: Math.round(shown.get(last) ?? 0),
    ...(t && { start: Math.round(t.startTime), firstByte: Math.round(t.responseStart), end: Math.round(t.responseEnd), bytes: t.encodedBodySize }),
    ...(load && { source: load.source, peer: load.peer ? String(load.peer).slice(-6) : undefined, asked: load.asked, ms: Math.round(load.ms), loadedAt: load.at })
  }
}

/**
 * In the page, before its scripts (`--per-visit`): a log of the peer protocol
 * on the page's data channels, as the page sends and reads it — each `get`
 * (channel, request id, hash, when), each `ok` header (its size) and each
 * binary frame's length — for {@link channelRequests}.
 */
function logChannels () {
  /** @type {(string | number)[][]} */
  const log = []
  Object.defineProperty(globalThis, '__channelLog', { value: log })
  let channels = 0
  const proto = RTCDataChannel.prototype
  /** @param {RTCDataChannel & { benchId?: number }} channel */
  const idOf = (channel) => (channel.benchId ??= ++channels)
  const send = proto.send
  proto.send = function (/** @type {any} */ data) {
    if (typeof data === 'string' && data.includes('"get"')) {
      const m = JSON.parse(data)
      if (m.t === 'get') log.push(['get', idOf(this), m.id, String(m.hash).slice(7, 15), Math.round(performance.now())])
    }
    return send.call(this, data)
  }
  const add = proto.addEventListener
  proto.addEventListener = function (/** @type {string} */ type, /** @type {any} */ fn, /** @type {any} */ options) {
    if (type === 'message') {
      const channel = this
      const inner = fn
      fn = (/** @type {MessageEvent} */ e) => {
        const at = Math.round(performance.now())
        if (typeof e.data !== 'string') log.push(['bytes', idOf(channel), e.data.byteLength, at])
        else if (e.data.includes('"ok"')) {
          const m = JSON.parse(e.data)
          if (m.t === 'ok') log.push(['ok', idOf(channel), m.id, m.size, at])
        }
        inner(e)
      }
    }
    return add.call(this, type, fn, options)
  }
}

/**
 * In the page, once all have shown: its requests to peers from the channel
 * log ({@link logChannels}), each `[channel, hash (8 characters), KB, asked,
 * its last byte]` (ms from navigation; null: not come), in the order asked:
 * a reply much slower than its neighbours is one a slow visit waited for.
 * @returns {(string | number | null)[][]}
 */
function channelRequests () {
  const log = /** @type {(string | number)[][]} */ (/** @type {any} */ (globalThis).__channelLog ?? [])
  /** @type {Map<string, { channel: number, hash: string, size: number, got: number, asked: number, done: number | null }>} */
  const requests = new Map()
  /** @type {Map<number, string>} each channel's reply being read */
  const reading = new Map()
  for (const [kind, channel, a, b, c] of log) {
    const key = `${channel} ${a}`
    if (kind === 'get') requests.set(key, { channel: Number(channel), hash: String(b), size: 0, got: 0, asked: Number(c), done: null })
    else if (kind === 'ok') {
      const r = requests.get(key)
      if (!r) continue
      r.size = Number(b)
      reading.set(Number(channel), key)
      if (r.size === 0) r.done = Number(c)
    } else {
      const r = requests.get(reading.get(Number(channel)) ?? '')
      if (!r) continue
      r.got += Number(a)
      if (r.got >= r.size) r.done = Number(b)
    }
  }
  return [...requests.values()].map((r) => [r.channel, r.hash, Math.round(r.size / 1024), r.asked, r.done])
}

/** A holder's patch: its data channels stay open and it never sends a thing on them. */
function silence () {
  RTCDataChannel.prototype.send = function () {}
}

/**
 * One side of a run: a checkout's client (built from its source), coordinator
 * and demo site, behind a distant-origin proxy of its own, and the holders
 * opened on it. Without --base there is one, this tree's; with it, DIR's too.
 * @param {string} root the checkout
 * @param {{ rttMs: number, mbps: number }} profile
 */
async function openSide (root, profile) {
  const load = (/** @type {string} */ path) => import(pathToFileURL(join(root, path)).href)
  const [{ buildClient }, { startCoordinator }, { startDemoSite }] = await Promise.all([load('client/build.js'), load('coordinator/src/server.js'), load('demo-site/src/server.js')])
  const dir = await mkdtemp(join(tmpdir(), 'maygh-bench-'))
  const { outdir } = await buildClient({ outdir: dir })
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  // The coordinator as far away as asked: its pages (and workers) reach it through the relay.
  const far = coordinatorRtt ? await startDistantTcp({ port: Number(new URL(coordinator.url).port), rttMs: coordinatorRtt }) : null
  const coordinatorUrl = far ? `ws://127.0.0.1:${far.port}` : coordinator.url
  const site = await startDemoSite({ port: 0, host: '127.0.0.1', coordinatorUrl, clientDir: outdir, clientData })
  const origin = await startSlowOrigin({ target: site.url, ...profile })
  const refused = `ws://127.0.0.1:${await freePort()}`
  origin.html = (html, url) => {
    const variant = url.searchParams.get('bench')
    if (variant === 'none') return html.replace(/<script src="\/maygh(-elements)?\.js"[^>]*><\/script>\n?/, '')
    if (variant === 'down') return html.replace(/data-coordinator="[^"]*"/, `data-coordinator="${refused}"`)
    return html
  }
  return {
    origin,
    site,
    /** @type {import('playwright-core').BrowserContext[]} */
    holders: [],
    /** Sessions that hold something: the holders' pages (the sockets their workers keep hold nothing; a visitor's page once it has gone, none). */
    holding: () => [...coordinator.sessions.values()].filter((/** @type {any} */ s) => s.assets.size > 0).length,
    /** What the coordinator holds of each session: for a run that stops waiting on `holding`. */
    sessions: () => [...coordinator.sessions.values()].map((/** @type {any} */ s) => ({ peer: s.peerId, assets: s.assets.size, ip: s.ip })),
    // Its holders close with their browser.
    async close () {
      await origin.close()
      await site.close()
      await far?.close()
      await coordinator.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
/** @typedef {Awaited<ReturnType<typeof openSide>>} Side */

/** @param {Side} side its holders leave */
async function closeHolders (side) {
  for (const h of side.holders) await h.close()
  side.holders = []
}

/**
 * One profile: a fresh side (two with --base), and the browsers.
 * @param {{ rttMs: number, mbps: number }} profile
 */
async function runProfile (profile) {
  /** @type {Side[]} this tree's last; the origin-only visits go to each side's origin in turn */
  const sides = []
  // Holders in one browser process, the visitor under measurement in another.
  const holderBrowser = await launchBrowser(engine)
  const visitorBrowser = await launchBrowser(engine)
  /** @type {Record<string, any>} */
  const results = {}
  try {
    if (baseDir !== null) sides.push(await openSide(baseDir, profile))
    sides.push(await openSide(here, profile))
    const ours = sides[sides.length - 1]
    const shopImageBytes = await imageBytesOfShop(ours.site.url)
    for (const mode of modes) {
      const shop = mode === 'transparent' ? '/' : '/elements'
      for (const scenario of scenarios) {
        // An elements-mode visitor's first view is its holders scenario.
        if (scenario === 'newcomer' && mode !== 'transparent') continue
        const wantHolders = scenario === 'first' || scenario === 'down' ? 0 : holderCount
        /**
         * The side's holders for this scenario: fresh ones when it has another number of them, or
         * when one of them could not serve a whole visit more within its session's upload budget
         * (a holder at the client's defaults stops sharing there: 50 MB, the shop's images about 15 times over).
         * @param {Side} side
         * @param {boolean} fresh
         */
        const holdersFor = async (side, fresh) => {
          if (!fresh && side.holders.length === wantHolders) {
            const budget = BUDGET_DEFAULTS.uploadSessionMb * 2 ** 20
            for (const h of side.holders) if (await servedBy([h]) + shopImageBytes > budget) fresh = true
            if (!fresh) return
            console.error(`page-load: ${mode}/${scenario}: fresh holders, one having served within a visit of its session's upload budget`)
          }
          await closeHolders(side)
          for (let i = 0; i < wantHolders; i++) side.holders.push(await openHolder(holderBrowser, side.origin.url + shop))
          if (scenario === 'silent') await side.holders[0].pages()[0].evaluate(silence)
          if (scenario === 'liar') await side.holders[0].pages()[0].evaluate(hideCandidates)
          await holdersOnly(side, `${scenario}: the holders' setup`)
        }
        for (const side of sides) await holdersFor(side, side.holders.length !== wantHolders)
        // The silent holder's `served` counts bytes its patched send() dropped: not an upload.
        const answering = (/** @type {Side} */ side) => scenario === 'silent' || scenario === 'liar' ? side.holders.slice(1) : side.holders
        /** @type {import('./page-load-report.js').Run[]} the origin-only visits, which the sides share */
        const none = []
        /** @type {{ maygh: import('./page-load-report.js').Run[], udp: { datagrams: number, dropped: number } }[]} each side's maygh visits, and the UDP datagrams they received and dropped (udpCounters) */
        const bySide = sides.map(() => ({ maygh: [], udp: { datagrams: 0, dropped: 0 } }))
        for (let i = 0; i < visits; i++) {
          // Each side's visit first in turn.
          const order = sides.map((_, k) => (k + i) % sides.length)
          for (const kind of /** @type {const} */ (['none', 'maygh'])) {
            // The origin-only visit through each side's stack in turn too: always through one side's, that
            // side's origin and site were the warmer, and an A/A run read 0.91 of viewport p95 (and 0.92 p50).
            for (const k of kind === 'none' ? [i % sides.length] : order) {
              const side = sides[k]
              const variant = kind === 'none' ? 'none' : scenario === 'down' ? 'down' : 'maygh'
              if (kind === 'maygh') await holdersFor(side, false)
              const servedBefore = await servedBy(answering(side))
              const udpBefore = udpCounters()
              const run = await visit(visitorBrowser, side.origin, { mode, shop, variant, fresh: scenario === 'newcomer' })
              // The visitor has left: wait until the coordinator no longer lists it (its channels are closed).
              await holdersOnly(side, `after a ${variant} visit`)
              const udpAfter = udpCounters()
              const udp = udpBefore && udpAfter && { datagrams: udpAfter.datagrams - udpBefore.datagrams, dropped: udpAfter.dropped - udpBefore.dropped }
              if (kind === 'maygh' && udp) {
                bySide[k].udp.datagrams += udp.datagrams
                bySide[k].udp.dropped += udp.dropped
              }
              const measured = { ...run, servedBytes: await servedBy(answering(side)) - servedBefore }
              if (kind === 'none') none.push(measured)
              else bySide[k].maygh.push(measured)
              if (perVisit) {
                const { viewportMs, allMs, lcpMs, originImageBytes, steps, last } = run
                console.error(JSON.stringify({ profile: `${profile.rttMs}/${profile.mbps}`, scenario: `${mode}/${scenario}`, kind, ...(sides.length > 1 && kind === 'maygh' && { side: k === sides.length - 1 ? 'new' : 'base' }), viewportMs: Math.round(viewportMs), allMs: Math.round(allMs), lcpMs, originImageBytes, ...(udp && { udp }), ...(last && { last }), ...(steps && { steps }) }))
              }
            }
          }
        }
        const summed = bySide.map(({ maygh, udp }) => ({
          ...summarize({ maygh, none }, scenario, shopImageBytes),
          udp,
          timeline: timeline ? { maygh: medianTimeline(maygh.map((r) => r.steps ?? {})), none: medianTimeline(none.map((r) => r.steps ?? {})) } : undefined
        }))
        const result = results[`${mode}/${scenario}`] = summed[summed.length - 1]
        if (sides.length > 1) Object.assign(result, { base: summed[0], ab: abRatios(result, summed[0], { ours: bySide[bySide.length - 1].maygh, base: bySide[0].maygh }) })
        for (const [k, { udp }] of bySide.entries()) {
          const which = sides.length > 1 ? (k === sides.length - 1 ? ' (this tree)' : ' (--base)') : ''
          if (udp.datagrams) console.error(`page-load: ${mode}/${scenario}${which}: the maygh visits' UDP datagrams (peers' channels, STUN) dropped by full receive buffers: ${udp.dropped} of ${udp.datagrams} (${(100 * udp.dropped / udp.datagrams).toFixed(1)} %)`)
          const steps = summed[k].timeline
          if (steps) console.error(timelineLine(`${mode}/${scenario}${which}`, steps))
        }
        console.error(`page-load: ${profile.rttMs}/${profile.mbps} ${mode}/${scenario} done after ${Math.round((Date.now() - started) / 1000)} s`)
        if (scenario === 'silent' || scenario === 'liar') for (const side of sides) await closeHolders(side)
      }
      for (const side of sides) await closeHolders(side)
    }
    return results
  } finally {
    await holderBrowser.close()
    await visitorBrowser.close()
    for (const side of sides) await side.close()
  }
}

/**
 * The shop's image bytes, as the demo's manifest lists them: the images its
 * plain page shows (the elements page shows the same ones). Read from the
 * site itself, not through the proxy, so that the origin's counter does not see it.
 * @param {string} siteUrl
 */
async function imageBytesOfShop (siteUrl) {
  const [html, manifest] = await Promise.all([
    fetch(siteUrl + '/').then((r) => r.text()),
    fetch(siteUrl + '/maygh-manifest.json').then((r) => r.json())
  ])
  const paths = new Set([...html.matchAll(/<img [^>]*?src="([^"]+)"/g)].map((m) => new URL(m[1], siteUrl).pathname))
  let bytes = 0
  for (const path of paths) {
    const entry = manifest.assets[path]
    if (!entry) throw new Error(`page-load: the shop shows ${path}, which the manifest does not list`)
    bytes += entry.size
  }
  if (!bytes) throw new Error('page-load: found no images on the shop page')
  return bytes
}

/**
 * Bytes the holders have served so far, by their own count (`Maygh.stats().served`).
 * @param {import('playwright-core').BrowserContext[]} holders
 */
async function servedBy (holders) {
  let bytes = 0
  for (const h of holders) bytes += await h.pages()[0].evaluate(() => /** @type {any} */ (globalThis).Maygh.stats().served.bytes)
  return bytes
}

/**
 * A holder: a visitor that loaded the shop and stays, holding every image.
 * @param {import('playwright-core').Browser} browser
 * @param {string} url
 */
async function openHolder (browser, url) {
  const context = await browser.newContext(contextOptions)
  const page = await context.newPage()
  await page.goto(url)
  const count = await page.$$eval('main img', (imgs) => imgs.length)
  await until(async () => (await page.evaluate(async () => {
    const M = /** @type {any} */ (globalThis).Maygh
    await M.idle()
    return M.stats().held
  })) >= count, 200)
  return context
}

/**
 * One visitor in a fresh context: in transparent mode `/about` first (so the
 * worker controls the shop), then the shop; times from the shop's navigation.
 * `originImageBytes`: the image bytes the origin sent from the shop's
 * navigation until the visitor had gone (responses cut short by its leaving
 * included as far as they went). Visits run one at a time and the holders are
 * idle (they hold every image, and the client fetches nothing more on its own
 * until the next navigation), so all of it is this visit's.
 * @param {import('playwright-core').Browser} browser
 * @param {Awaited<ReturnType<typeof startSlowOrigin>>} origin
 * @param {{ mode: Mode, shop: string, variant: Variant, fresh: boolean }} how `fresh`: the shop is the visitor's first page of the site (else, in transparent mode, /about is first)
 */
async function visit (browser, origin, { mode, shop, variant, fresh }) {
  const base = origin.url
  const context = await browser.newContext(contextOptions)
  let imagesBefore = 0
  /** @type {{ viewportMs: number, allMs: number, lcpMs: number | null, stats: any, steps: Record<string, number> | null, last: Record<string, unknown> | null }} */
  let measured
  try {
    await context.addInitScript(instrumentPage)
    if (timeline) await context.addInitScript(recordTimeline)
    if (perVisit) await context.addInitScript(logChannels)
    const page = await context.newPage()
    // A slower device: the page's renderer throttled (its service worker's thread is not).
    if (cpuSlowdown > 1) await (await context.newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: cpuSlowdown })
    const query = `?bench=${variant}`
    /** @param {string} what the page that waits: what it says once it has not gone idle in time */
    const notIdle = (what) => async () => `${variant} visit to ${base}: ${what} not idle after ${VISIT_MS / 1000} s: ${JSON.stringify(await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats()))}`
    if (mode === 'transparent' && !fresh) {
      await page.goto(base + '/about' + query)
      if (variant !== 'none') await withinVisit(page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle()), notIdle('/about'))
    }
    imagesBefore = origin.sent.image ?? 0
    // Origin-only: the plain-markup shop (the elements page has no image URLs in its markup).
    await page.goto(base + (variant === 'none' ? '/' : shop) + query, { waitUntil: 'commit' })
    await withinVisit(page.evaluate(() => /** @type {any} */ (globalThis).__pageLoadBench.allShown), async () => `${variant} visit to ${base}: images not shown after ${VISIT_MS / 1000} s: ${JSON.stringify(await page.evaluate(notShown))}`)
    const viewportMs = /** @type {number} */ (await page.evaluate(shownBy, true))
    const allMs = /** @type {number} */ (await page.evaluate(shownBy, false))
    const lcpMs = await page.evaluate(largestPaint)
    const steps = timeline ? await page.evaluate(readTimeline) : null
    const last = perVisit && variant !== 'none' ? await page.evaluate(lastInViewport) : null
    if (last) last.requests = await page.evaluate(channelRequests)
    const stats = variant === 'none'
      ? null
      : await withinVisit(page.evaluate(async () => {
        const M = /** @type {any} */ (globalThis).Maygh
        await M.idle()
        return M.stats()
      }), notIdle('the shop'))
    measured = { viewportMs, allMs, lcpMs, stats, steps, last }
  } finally {
    await context.close()
  }
  // Responses cut short by the visitor's leaving end now.
  await until(async () => origin.active === 0, 20)
  return { ...measured, originImageBytes: (origin.sent.image ?? 0) - imagesBefore }
}

try {
  /** @type {Record<string, any>} */
  const out = {}
  // The machine's speed before and after, beside the figures.
  const speedEnd = machineSpeedSpan((line) => console.error(`page-load: ${line}`))
  for (const profile of profiles) {
    const results = await runProfile(profile)
    const settings = `${hedge === HEDGE_PREFERENCES[0] ? '' : `, data-hedge=${hedge}`}${cpuSlowdown > 1 ? `, CPU ${cpuSlowdown}× slower` : ''}`
    printTable({ engine: engine + settings, visits, profile }, results)
    out[`${profile.rttMs}/${profile.mbps}`] = results
  }
  const machine = speedEnd()
  console.log(JSON.stringify({ engine, hedge, visits, holders: holderCount, coordinatorRttMs: coordinatorRtt, cpuSlowdown, machine, profiles: out, seconds: Math.round((Date.now() - started) / 1000) }))
  process.exit(0)
} catch (err) {
  console.error('page-load: failed:', err)
  process.exit(1)
}
