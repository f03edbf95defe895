#!/usr/bin/env node
/* global HTMLImageElement, RTCDataChannel, innerHeight, innerWidth -- used inside page callbacks, which run in the browser */
/**
 * Is a page with maygh ever slower than without? The demo shop behind a
 * distant origin (bench/slow-origin.js: added round trip, per-response
 * bandwidth), peers and coordinator on loopback, real Chromium (or Firefox, `--engine`): the time from
 * navigation until every image in the first viewport (1280×720) shows, and
 * until all of the shop's images do, per visit; p50 and p95 over `--visits`
 * fresh visitors per scenario.
 *
 * Every scenario alternates its maygh visits with visits to the same pages
 * with the client's script tag removed (the origin-only run), so each ratio
 * compares visits made at the same time under the same load. The client runs
 * at its defaults (the demo's `data-hedge-min-ms` is not set).
 *
 * Modes: `transparent` (the shop at `/`, plain `<img src>`, maygh.js and its
 * worker) and `elements` (the shop at `/elements`, maygh-elements.js).
 * A transparent-mode visitor gets peers' bytes once the worker controls the
 * page, so there the measured visitors (and the origin-only ones) open
 * `/about` first and then the shop; an elements-mode visitor opens the shop
 * fresh. Scenarios, each on the mode's visitors:
 *   first    no holder online: every image from the origin
 *   holders  --holders visitors that loaded the shop are online
 *   down     the coordinator is unreachable (connections refused)
 *   silent   --holders holders online, one of them silent (its channels open, it never answers)
 *
 *   node bench/page-load.js [--profiles 80/5,200/2] [--visits 20] [--holders 3]
 *     [--modes transparent,elements] [--scenarios first,holders,down,silent] [--max-seconds 3000]
 *
 * Run it inside the loopback-only namespace, like the end-to-end tests:
 *   unshare -n sh -c 'ip link set lo up && ip route add default dev lo src 127.0.0.1 && exec "$@"' sh node bench/page-load.js
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildClient } from '../client/build.js'
import { startCoordinator } from '../coordinator/src/server.js'
import { startDemoSite } from '../demo-site/src/server.js'
import { launchBrowser, until } from '../test/support/browsers.js'
import { freePort } from '../test/support/redis-server.js'
import { startSlowOrigin } from './slow-origin.js'

const HELP = `node bench/page-load.js [options]
  --profiles LIST   origin profiles, RTT_MS/MBIT_S, comma separated (default 80/5,200/2)
  --visits N        measured maygh visits per scenario, as many origin-only ones (default 20)
  --holders N       holders online in the holders and silent scenarios (default 3)
  --modes LIST      transparent, elements (default both)
  --scenarios LIST  first, holders, down, silent (default all)
  --max-seconds N   give up after this long (default 3000)
  --engine NAME     chromium (default) or firefox: the holders' and the visitors' browser

Prints a table per profile and one JSON line: per mode and scenario the p50/p95
time until the viewport's images show and until all images do, for maygh and for
the origin-only visits made alongside, their ratio, and where maygh's bytes came from.`

const MODES = /** @type {const} */ (['transparent', 'elements'])
const SCENARIOS = /** @type {const} */ (['first', 'holders', 'down', 'silent'])
/** @typedef {typeof MODES[number]} Mode */
/** @typedef {typeof SCENARIOS[number]} Scenario */
/** What the proxy serves a page as: untouched, without the client, or with a coordinator that refuses. */
/** @typedef {'maygh' | 'none' | 'down'} Variant */

/** The targets the issue set: p95 viewport time against the origin-only run. */
const TARGETS = { first: 1.05, holders: 1.0, down: 1.05, silent: 1.05 }
/** with the slowest profile (RTT ≥ 200 ms), holders must make the page this much faster */
const SLOW_HOLDERS_TARGET = 0.7

const { values } = parseArgs({
  options: {
    profiles: { type: 'string', default: '80/5,200/2' },
    visits: { type: 'string', default: '20' },
    holders: { type: 'string', default: '3' },
    modes: { type: 'string', default: MODES.join(',') },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    'max-seconds': { type: 'string', default: '3000' },
    engine: { type: 'string', default: 'chromium' },
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
/** @param {'visits' | 'holders' | 'max-seconds'} name @param {number} min @param {number} max */
function intFlag (name, min, max) {
  const n = Number(values[name])
  if (!Number.isInteger(n) || n < min || n > max) usage(`--${name} must be an integer from ${min} to ${max}`)
  return n
}
/**
 * @template {string} T
 * @param {'modes' | 'scenarios' | 'engine'} name
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

/** Runs in each measured page before its own scripts: when each image fired `load`. */
function instrumentPage () {
  /** @type {WeakMap<HTMLImageElement, number>} */
  const shown = new WeakMap()
  Object.defineProperty(globalThis, '__pageLoadBench', { value: shown })
  document.addEventListener('load', (e) => {
    if (e.target instanceof HTMLImageElement) shown.set(e.target, performance.now())
  }, true)
}

/**
 * In the page: ms from navigation until the last of the shop's images (those
 * in the first viewport, or all) showed, once every one has; false before.
 * @param {boolean} viewportOnly
 * @returns {number | false}
 */
function shownBy (viewportOnly) {
  const shown = /** @type {WeakMap<HTMLImageElement, number>} */ (/** @type {any} */ (globalThis).__pageLoadBench)
  const imgs = /** @type {HTMLImageElement[]} */ ([...document.querySelectorAll('main img')])
  const wanted = viewportOnly
    ? imgs.filter((img) => {
      const r = img.getBoundingClientRect()
      return r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth
    })
    : imgs
  let last = 0
  for (const img of wanted) {
    const at = shown.get(img)
    if (!img.complete || img.naturalWidth === 0 || at === undefined) return false
    last = Math.max(last, at)
  }
  return wanted.length > 0 && document.readyState !== 'loading' && last
}

/** A holder's patch: its data channels stay open and it never sends a thing on them. */
function silence () {
  RTCDataChannel.prototype.send = function () {}
}

/**
 * Nearest-rank percentile.
 * @param {number[]} xs
 * @param {number} q in (0, 1]
 */
function percentile (xs, q) {
  const sorted = [...xs].sort((a, b) => a - b)
  return Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)])
}
const ratio = (/** @type {number} */ a, /** @type {number} */ b) => Math.round(a / b * 100) / 100

/**
 * One profile: a fresh coordinator, demo site and distant-origin proxy.
 * @param {{ rttMs: number, mbps: number }} profile
 */
async function runProfile (profile) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-bench-'))
  const { outdir } = await buildClient({ outdir: dir })
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const site = await startDemoSite({ port: 0, host: '127.0.0.1', coordinatorUrl: coordinator.url, clientDir: outdir, clientData: {} })
  const origin = await startSlowOrigin({ target: site.url, ...profile })
  const refused = `ws://127.0.0.1:${await freePort()}`
  origin.html = (html, url) => {
    const variant = url.searchParams.get('bench')
    if (variant === 'none') return html.replace(/<script src="\/maygh(-elements)?\.js"[^>]*><\/script>\n?/, '')
    if (variant === 'down') return html.replace(/data-coordinator="[^"]*"/, `data-coordinator="${refused}"`)
    return html
  }
  // Holders in one browser process, the visitor under measurement in another.
  const holderBrowser = await launchBrowser(engine)
  const visitorBrowser = await launchBrowser(engine)
  /** @type {Record<string, any>} */
  const results = {}
  try {
    for (const mode of modes) {
      const shop = mode === 'transparent' ? '/' : '/elements'
      /** @type {import('playwright-core').BrowserContext[]} */
      let holders = []
      for (const scenario of scenarios) {
        const wantHolders = scenario === 'holders' || scenario === 'silent' ? holderCount : 0
        if (holders.length !== wantHolders) {
          for (const h of holders) await h.close()
          holders = []
          for (let i = 0; i < wantHolders; i++) holders.push(await openHolder(holderBrowser, origin.url + shop))
        }
        if (scenario === 'silent') await holders[0].pages()[0].evaluate(silence)
        await until(async () => coordinator.sessions.size === holders.length)
        /** @type {{ maygh: Awaited<ReturnType<typeof visit>>[], none: Awaited<ReturnType<typeof visit>>[] }} */
        const runs = { maygh: [], none: [] }
        for (let i = 0; i < visits; i++) {
          for (const kind of /** @type {const} */ (['none', 'maygh'])) {
            const variant = kind === 'none' ? 'none' : scenario === 'down' ? 'down' : 'maygh'
            runs[kind].push(await visit(visitorBrowser, origin.url, { mode, shop, variant }))
            // The visitor has left: wait until the coordinator no longer lists it.
            await until(async () => coordinator.sessions.size === holders.length)
          }
        }
        results[`${mode}/${scenario}`] = summarize(runs, scenario, profile)
        console.error(`page-load: ${profile.rttMs}/${profile.mbps} ${mode}/${scenario} done after ${Math.round((Date.now() - started) / 1000)} s`)
        if (scenario === 'silent') {
          for (const h of holders) await h.close()
          holders = []
        }
      }
      for (const h of holders) await h.close()
    }
    return results
  } finally {
    await holderBrowser.close()
    await visitorBrowser.close()
    await origin.close()
    await site.close()
    await coordinator.close()
    await rm(dir, { recursive: true, force: true })
  }
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
 * @param {import('playwright-core').Browser} browser
 * @param {string} base the distant origin
 * @param {{ mode: Mode, shop: string, variant: Variant }} how
 */
async function visit (browser, base, { mode, shop, variant }) {
  const context = await browser.newContext(contextOptions)
  try {
    await context.addInitScript(instrumentPage)
    const page = await context.newPage()
    const query = `?bench=${variant}`
    if (mode === 'transparent') {
      await page.goto(base + '/about' + query)
      if (variant !== 'none') await page.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    }
    // Origin-only: the plain-markup shop (the elements page has no image URLs in its markup).
    await page.goto(base + (variant === 'none' ? '/' : shop) + query, { waitUntil: 'commit' })
    const viewportMs = /** @type {number} */ (await (await page.waitForFunction(shownBy, true, { polling: 50 })).jsonValue())
    const allMs = /** @type {number} */ (await (await page.waitForFunction(shownBy, false, { polling: 50 })).jsonValue())
    const stats = variant === 'none'
      ? null
      : await page.evaluate(async () => {
        const M = /** @type {any} */ (globalThis).Maygh
        await M.idle()
        return M.stats()
      })
    return { viewportMs, allMs, stats }
  } finally {
    await context.close()
  }
}

/**
 * @param {{ maygh: { viewportMs: number, allMs: number, stats: any }[], none: { viewportMs: number, allMs: number }[] }} runs
 * @param {Scenario} scenario
 * @param {{ rttMs: number }} profile
 */
function summarize (runs, scenario, profile) {
  /** @param {{ viewportMs: number, allMs: number }[]} rs */
  const figures = (rs) => ({
    viewportP50: percentile(rs.map((r) => r.viewportMs), 0.5),
    viewportP95: percentile(rs.map((r) => r.viewportMs), 0.95),
    allP50: percentile(rs.map((r) => r.allMs), 0.5),
    allP95: percentile(rs.map((r) => r.allMs), 0.95)
  })
  const maygh = figures(runs.maygh)
  const none = figures(runs.none)
  const sum = (/** @type {(s: any) => number} */ f) => runs.maygh.reduce((n, r) => n + f(r.stats), 0)
  const peerBytes = sum((s) => s.peer.bytes)
  const originBytes = sum((s) => s.origin.bytes)
  const target = scenario === 'holders' && profile.rttMs >= 200 ? SLOW_HOLDERS_TARGET : TARGETS[scenario]
  const viewportRatio = ratio(maygh.viewportP95, none.viewportP95)
  return {
    maygh,
    none,
    viewportRatio,
    allRatio: ratio(maygh.allP95, none.allP95),
    peerShare: peerBytes + originBytes > 0 ? Math.round(peerBytes / (peerBytes + originBytes) * 100) / 100 : 0,
    errors: sum((s) => Object.values(s.errors).reduce((a, b) => a + b, 0)),
    target,
    met: viewportRatio <= target
  }
}

/** @param {{ rttMs: number, mbps: number }} profile @param {Record<string, any>} results */
function printTable (profile, results) {
  console.log(`\n${engine}, origin +${profile.rttMs} ms RTT, ${profile.mbps} Mbit/s per response; ${visits} maygh and ${visits} origin-only visits per row; ms, p50 / p95`)
  console.log('mode/scenario          viewport maygh   viewport origin  ratio  all maygh        all origin       ratio  peer share  target')
  for (const [name, r] of Object.entries(results)) {
    const pair = (/** @type {number} */ a, /** @type {number} */ b) => `${a} / ${b}`.padEnd(17)
    console.log(`${name.padEnd(23)}${pair(r.maygh.viewportP50, r.maygh.viewportP95)}${pair(r.none.viewportP50, r.none.viewportP95)}${String(r.viewportRatio).padEnd(7)}${pair(r.maygh.allP50, r.maygh.allP95)}${pair(r.none.allP50, r.none.allP95)}${String(r.allRatio).padEnd(7)}${String(r.peerShare).padEnd(12)}≤ ${r.target} ${r.met ? 'met' : 'MISSED'}`)
  }
}

try {
  /** @type {Record<string, any>} */
  const out = {}
  for (const profile of profiles) {
    const results = await runProfile(profile)
    printTable(profile, results)
    out[`${profile.rttMs}/${profile.mbps}`] = results
  }
  console.log(JSON.stringify({ engine, visits, holders: holderCount, profiles: out, seconds: Math.round((Date.now() - started) / 1000) }))
  process.exit(0)
} catch (err) {
  console.error('page-load: failed:', err)
  process.exit(1)
}
