/**
 * The command line: `maygh-swarm --trace FILE …` (`npm run swarm -- …`).
 * Replays a slice of the log through the real system (crowd.js) as many times
 * as `--repeat` says, once more without the script (the page-load baseline),
 * runs the simulator on the same slice, and prints both side by side with
 * the check that binds them. Flags are parsed here only; bad flags and
 * unreadable logs print `maygh-swarm: CODE: message` and exit 2, with the
 * simulator's codes (the slice is read by its reader).
 */
import { parseArgs } from 'node:util'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../../client/build.js'
import { ERRORS, MayghError } from '../../protocol/index.js'
import { readSlice, toCsv } from './slice.js'
import { runCrowdApart } from './crowd-process.js'
import { AGREE_POINTS, REPEAT_POINTS, bind, crowdFigures, percentile, simFigures } from './figures.js'

/** Documented defaults (docs/swarm.md, "Flags"). */
const defaults = {
  /** seconds after the log's first request where the slice begins */
  from: 0,
  /** seconds of log replayed */
  duration: 600,
  /** log seconds per real second */
  speedup: 10,
  /** the origin's added round trip, ms (common/distant-link.js) */
  rttMs: 80,
  /** the origin's bandwidth per response, Mbit/s */
  mbps: 5,
  /** share of visitors behind a NAT no peer can reach */
  untraversable: 0.1,
  /** which visitors those are (the simulator's rule) */
  seed: 1,
  /** crowd runs of the slice (two or more: the repeat spread) */
  repeat: 2,
  /** the busiest clients browse in real browsers (Chromium and Firefox in turn); the rest are Node peers */
  browsers: 2,
  /** coordinators (more than one needs --store redis or cluster) */
  shards: 1,
  /** lying Node visitors added to the log's, holding its most asked-for assets (corrupt bytes and false misses in turn) */
  liars: 0
}
// Frozen apart from its literal, so that fields type as number, not as their default values.
export const SWARM_DEFAULTS = Object.freeze(defaults)

/** the coordinators' stores */
const STORES = /** @type {const} */ (['memory', 'redis', 'cluster'])

/**
 * The crowd's setting in the simulator's terms, where they differ from its
 * defaults: the origin as the delaying proxy puts it, peers on loopback.
 * @param {typeof SWARM_DEFAULTS} o
 */
export function simSettings (o) {
  return {
    untraversable: o.untraversable,
    failRate: 0,
    seed: o.seed,
    originTtfb: o.rttMs / 1000,
    originRate: o.mbps * 1e6 / 8,
    // @roamhq/wrtc on loopback: a channel in ~0.1 s (signalling included), ~12 MB/s, the coordinator ~1 ms away
    setupTime: 0.1,
    lookupTime: 0.002,
    peerRate: 12e6
  }
}

const NUMBERS = /** @type {const} */ (['from', 'duration', 'speedup', 'rttMs', 'mbps', 'untraversable', 'seed', 'repeat', 'browsers', 'shards', 'liars'])
const kebab = (/** @type {string} */ k) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

export function helpText () {
  return [
    'maygh-swarm --trace FILE [flags]: replay a slice of a real access log through the real system',
    '(coordinator, replay origin behind a delaying proxy, Node peers running the client) and the simulator; print both.',
    '',
    ...NUMBERS.map((k) => `  --${kebab(k).padEnd(15)} ${String(SWARM_DEFAULTS[k]).padEnd(6)} ${HELP[k]}`),
    '  --store          memory the coordinators\' store: memory (one coordinator), redis, or cluster (6 Redis nodes, started for the run)',
    '  --no-baseline           skip the replay without the script (page-load baseline)',
    '  --no-sim                skip the simulator',
    '  --csv FILE              also write the slice as the CSV the simulator reads',
    '  --views FILE            also write every page view of every run as a JSON line (what sits behind a p95)',
    '  --json                  print one JSON object instead of the summary',
    '  --help                  this text'
  ].join('\n')
}

const HELP = /** @type {Record<typeof NUMBERS[number], string>} */ ({
  from: 'seconds after the log\'s first request where the slice begins',
  duration: 'seconds of log replayed',
  speedup: 'log seconds per real second',
  rttMs: 'the origin\'s added round trip, ms',
  mbps: 'the origin\'s bandwidth per response, Mbit/s',
  untraversable: 'share of visitors behind a NAT no peer reaches',
  seed: 'which visitors those are',
  repeat: 'crowd runs of the slice (≥ 2 gives the repeat spread)',
  browsers: 'busiest clients that browse in Chromium and Firefox (in turn)',
  shards: 'coordinators (more than one: --store redis or cluster)',
  liars: 'lying visitors added, holding the most asked-for assets (corrupt bytes, false misses in turn)'
})

/**
 * @param {string[]} argv
 * @returns {{ help: true } | { help: false, trace: string, csv: string | undefined, views: string | undefined, json: boolean, baseline: boolean, sim: boolean, store: typeof STORES[number], o: typeof SWARM_DEFAULTS }}
 */
export function parseFlags (argv) {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      options: {
        trace: { type: 'string' },
        csv: { type: 'string' },
        views: { type: 'string' },
        store: { type: 'string' },
        json: { type: 'boolean' },
        'no-baseline': { type: 'boolean' },
        'no-sim': { type: 'boolean' },
        help: { type: 'boolean' },
        ...Object.fromEntries(NUMBERS.map((k) => [kebab(k), { type: /** @type {const} */ ('string') }]))
      }
    })
  } catch (err) {
    throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_FLAG, String(/** @type {Error} */ (err).message))
  }
  const v = parsed.values
  if (v.help) return { help: true }
  if (!v.trace) throw new MayghError(ERRORS.MGH_SIM_ERR_NO_INPUT, 'give --trace FILE')
  /** @type {Record<string, number>} */
  const o = { ...SWARM_DEFAULTS }
  for (const k of NUMBERS) {
    const text = /** @type {string | undefined} */ (v[kebab(k)])
    if (text === undefined) continue
    const n = Number(text)
    const ok = Number.isFinite(n) && n >= 0 &&
      (k === 'untraversable' ? n <= 1 : true) &&
      ((k === 'speedup' || k === 'duration' || k === 'mbps') ? n > 0 : true) &&
      ((k === 'repeat' || k === 'seed' || k === 'browsers' || k === 'shards' || k === 'liars') ? Number.isInteger(n) : true) && (k === 'shards' ? n >= 1 && n <= 8 : true) && (k === 'repeat' ? n >= 1 && n <= 10 : true) && (k === 'browsers' ? n <= 8 : true)
    if (!ok) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--${kebab(k)} ${JSON.stringify(text)}: ${HELP[k]}`)
    o[k] = n
  }
  const store = /** @type {typeof STORES[number]} */ (v.store ?? 'memory')
  if (!STORES.includes(store)) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--store ${JSON.stringify(v.store)}: one of ${STORES.join(', ')}`)
  if (store === 'memory' && o.shards !== 1) throw new MayghError(ERRORS.MGH_SIM_ERR_BAD_VALUE, `--shards ${o.shards}: the in-process store serves one coordinator; use --store redis or cluster`)
  return { help: false, trace: v.trace, csv: v.csv, views: v.views, json: v.json === true, baseline: !v['no-baseline'], sim: !v['no-sim'], store, o: /** @type {typeof SWARM_DEFAULTS} */ (o) }
}

/**
 * @param {string[]} argv
 * @param {{ out: (s: string) => void, err: (s: string) => void }} io
 * @returns {Promise<number>} exit status
 */
export async function main (argv, io) {
  let flags
  /** @type {(() => void)[]} */
  const cleanup = []
  try {
    flags = parseFlags(argv)
    if (flags.help) {
      io.out(helpText())
      return 0
    }
    const { o } = flags
    const slice = await readSlice(flags.trace, { from: o.from, duration: o.duration })
    if (flags.csv) writeFileSync(flags.csv, toCsv(slice))
    const log = flags.json ? () => {} : (/** @type {string} */ line) => io.err(`  ${line}`)
    // The client as this checkout has it, built for the run.
    const clientDir = mkdtempSync(join(tmpdir(), 'maygh-swarm-client-'))
    cleanup.push(() => rmSync(clientDir, { recursive: true, force: true }))
    await buildClient({ outdir: clientDir })
    const common = { slice, speedup: o.speedup, rttMs: o.rttMs, mbps: o.mbps, clientDir, log }
    io.err(`slice: ${slice.requests.length} requests, ${slice.views.length} page views, ${slice.clients.size} visitors, ${mb(slice.totals.bytes)} counted`)
    const runs = []
    for (let i = 0; i < o.repeat; i++) {
      io.err(`crowd run ${i + 1} of ${o.repeat}`)
      runs.push(await runCrowdApart({ ...common, untraversable: o.untraversable, seed: o.seed, browsers: o.browsers, store: flags.store, shards: o.shards, liars: o.liars }))
    }
    const crowd = runs.map((r) => crowdFigures(slice, r))
    let baseline = null
    /** @type {Map<string, number>} each view's time without the script */
    const plainMs = new Map()
    if (flags.baseline) {
      io.err('replay without the script')
      const r = await runCrowdApart({ ...common, withScript: false })
      const ms = r.views.map((v) => v.ms)
      for (const v of r.views) plainMs.set(v.path, v.ms)
      baseline = { p50: percentile(ms, 0.5), p95: percentile(ms, 0.95), originBytes: crowdFigures(slice, r).originBytes }
    }
    if (flags.views) {
      const lines = runs.flatMap((r, run) => r.views.map((v) => JSON.stringify({ run: run + 1, ...v, plainMs: plainMs.get(v.path) ?? null })))
      writeFileSync(flags.views, lines.map((l) => l + '\n').join(''))
    }
    const sim = flags.sim ? await simFigures(slice, simSettings(o)) : null
    const check = sim ? bind(crowd, sim) : null
    const result = { store: flags.store, slice: { trace: flags.trace, from: o.from, duration: o.duration, requests: slice.requests.length, views: slice.views.length, visitors: slice.clients.size, countedBytes: slice.totals.bytes }, settings: o, crowd, runs: runs.map((r) => ({ wallMs: r.wallMs, coordinator: r.coordinator, untraversable: r.untraversable.length, origin: r.origin.byKind, errorSamples: r.errorSamples, quarantine: r.quarantine, crashes: r.crashes })), baseline, sim: sim && { ...sim, result: undefined }, check }
    io.out(flags.json ? JSON.stringify(result) : summary(result))
    return 0
  } catch (err) {
    const e = /** @type {any} */ (err)
    if (e instanceof MayghError || typeof e?.code === 'string') {
      io.err(`maygh-swarm: ${e.code}: ${e.message}`)
      return 2
    }
    throw err
  } finally {
    for (const done of cleanup) done()
  }
}

/** @param {number} b */
const mb = (b) => `${(b / 1e6).toFixed(2)} MB`
/** @param {number} x a share */
const pct = (x) => `${(100 * x).toFixed(1)}%`

/**
 * @param {any} r what main() gathered
 * @returns {string}
 */
function summary (r) {
  const lines = []
  const c = r.crowd
  lines.push(`crowd: ${r.slice.visitors} visitors (${Math.min(r.settings.browsers, r.slice.visitors)} in browsers), ${r.settings.shards} coordinator(s) on ${r.store}, ${r.settings.speedup}× time, origin +${r.settings.rttMs} ms / ${r.settings.mbps} Mbit/s, ${pct(r.settings.untraversable)} untraversable; ${c.length} run(s)`)
  if (r.check) {
    lines.push(`${''.padEnd(12)} ${'crowd'.padEnd(24)} ${'simulator'.padEnd(10)} diff`)
    for (const row of r.check.rows) {
      const isShare = row.figure !== 'lookups'
      const each = c.map((/** @type {any} */ f) => isShare ? (100 * f[row.figure]).toFixed(1) : String(f[row.figure])).join(', ')
      const fmt = (/** @type {number} */ x) => isShare ? `${x.toFixed(1)}%` : x.toFixed(0)
      lines.push(`${row.figure.padEnd(12)} ${`${fmt(row.crowd)} (${each})`.padEnd(24)} ${fmt(row.sim).padEnd(10)} ${row.diff >= 0 ? '+' : ''}${isShare ? row.diff.toFixed(1) + ' points' : (100 * row.diff / Math.max(row.sim, 1)).toFixed(1) + '%'}${row.within ? '' : '  (outside)'}`)
    }
    lines.push(`check: ${r.check.verdict} (within ±${AGREE_POINTS} points, lookups ±5%; repeat spread ${r.check.spread.toFixed(1)} points, ${r.check.spread <= REPEAT_POINTS ? 'within' : 'over'} ${REPEAT_POINTS})`)
    lines.push(`oracle (any listed online holder, no races or failures; the simulator's): ${pct(r.sim.oracleSavings)}; the crowd saved ${(c[0].savings / r.sim.oracleSavings).toFixed(2)}× of it`)
  } else {
    for (const f of c) lines.push(`savings ${pct(f.savings)}, peers ${pct(f.peerShare)}, own store ${pct(f.storeShare)}, ${f.lookups} lookups`)
  }
  for (const [i, f] of c.entries()) {
    const run = r.runs[i]
    lines.push(`run ${i + 1}: origin sent ${mb(f.originBytes)} of ${mb(f.countedBytes)} counted, and ${mb(f.maygh)} of maygh's own files (net savings ${pct(f.netSavings)}); ${f.failed} failed loads; ` +
      `dashboard: ${pct(f.dashboard.share)} of asset bytes not from the origin (origin counter: ${pct(f.dashboard.truth)}), origin ${mb(f.dashboard.originReported)} reported (counted ${mb(f.dashboard.originCounted)}); ` +
      `${run.coordinator.joins} joins, ${run.coordinator.lookupHits}/${run.coordinator.lookups} lookups hit, ${f.setups} peer set-ups, reports ${run.coordinator.reports_no_channel} no_channel / ${run.coordinator.reports_stall} stall / ${run.coordinator.reports_miss} miss / ${run.coordinator.reports_hash_mismatch} bad bytes, ${run.coordinator.quarantines} quarantined (liars ${run.quarantine.liars.filter((/** @type {string} */ l) => run.quarantine.quarantined.includes(l)).length} of ${run.quarantine.liars.length}, others ${run.quarantine.quarantined.filter((/** @type {string} */ q) => !run.quarantine.liars.includes(q)).length}); ` +
      `page load p50 ${f.p50.toFixed(0)} ms, p95 ${f.p95.toFixed(0)} ms; visitors' errors ${JSON.stringify(f.errors)}` +
      (run.crashes.length ? `; run again after ${run.crashes.length} crash(es) of the Node peers' WebRTC stack (${run.crashes.join(', ')})` : ''))
  }
  if (r.baseline) lines.push(`without the script: page load p50 ${r.baseline.p50.toFixed(0)} ms, p95 ${r.baseline.p95.toFixed(0)} ms (maygh/without: ${(c[0].p50 / r.baseline.p50).toFixed(2)}×, ${(c[0].p95 / r.baseline.p95).toFixed(2)}×); origin sent ${mb(r.baseline.originBytes)}`)
  return lines.join('\n')
}
