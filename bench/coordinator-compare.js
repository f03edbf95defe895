#!/usr/bin/env node
/**
 * The coordinator side by side with the signalling server people run today
 * (WebTorrent's tracker, `bittorrent-tracker`) and with the floor (a bare `ws`
 * server sending the same frames): the load generator (coordinator-load.js)
 * runs each of them in turn, `--rounds` times, the order rotated each round
 * so that a machine that slows down or speeds up weighs on all alike. Each
 * ratio is taken within a round, then summarised over the rounds.
 *
 *   npm run bench:compare -- [--rounds R] [--seconds S] [--warmup S] [--idle I] [--rate R] [--redis]
 *
 * --redis adds the coordinator on one Redis; --rate runs each at that fixed
 * rate (an open loop) instead of as fast as it goes, to compare latencies.
 * Prints one JSON line: per server, min / median / max of transactions per
 * server core-second, p50, p99 and bytes per idle client, and the
 * transactions and failed transactions of all its runs (by code: a stray
 * failure is counted, not fatal); then the coordinator's ratios to the
 * others. --signal and --workload are passed on (the coordinator's and the
 * bare server's lookups carry their offer by default; `--workload page`
 * compares page views of the demo shop: then transactions are page views;
 * `--workload relay` relay only, against PeerJS's server instead of the tracker).
 * Progress goes to stderr.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const LOAD = fileURLToPath(new URL('./coordinator-load.js', import.meta.url))
const FIGURES = /** @type {const} */ (['tpsPerCoreS', 'p50Ms', 'p99Ms', 'bytesPerClient'])

/** @typedef {{ name: string, args: string[] }} Entry */
/** @typedef {Record<typeof FIGURES[number], number> & { bytesPerClient: number | null, transactions: number, errors: number, errorCodes?: Record<string, number> }} Figures */

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    idle: { type: 'string', default: '10000' },
    rate: { type: 'string' },
    signal: { type: 'string' },
    workload: { type: 'string' },
    redis: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  process.stdout.write('Usage: npm run bench:compare -- [--rounds R (3)] [--seconds S (10)] [--warmup S (2)] [--idle I (10000)] [--rate R] [--signal offer|connect] [--workload transaction|page|relay] [--redis]\n')
  process.exit(0)
}
const rounds = Number(values.rounds)
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) {
  process.stderr.write(`coordinator-compare: --rounds must be an integer from 1 to 20, got "${values.rounds}"\n`)
  process.exit(2)
}

// Checked by the load generator, which exits 2 on a bad one.
const common = ['--seconds', values.seconds, '--warmup', values.warmup, '--idle', values.idle, ...(values.rate === undefined ? [] : ['--rate', values.rate]), ...(values.signal === undefined ? [] : ['--signal', values.signal]), ...(values.workload === undefined ? [] : ['--workload', values.workload])]
/** @type {Entry[]} */
const entries = [
  { name: 'coordinator/memory', args: ['--server', 'coordinator', '--store', 'memory'] },
  ...(values.redis ? [{ name: 'coordinator/redis', args: ['--server', 'coordinator', '--store', 'redis'] }] : []),
  // Relay only is PeerJS's work; the tracker relays only inside its announces.
  values.workload === 'relay' ? { name: 'peerjs-server', args: ['--server', 'peerjs'] } : { name: 'bittorrent-tracker', args: ['--server', 'bittorrent-tracker'] },
  { name: 'bare ws', args: ['--server', 'bare'] }
]

/**
 * @param {string[]} args
 * @returns {Promise<Figures>} the figures of one run of the load generator
 */
function runLoad (args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [LOAD, ...args, ...common], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`coordinator-load ${args.join(' ')} failed: ${stderr.trim().split('\n').at(-1)}`))
      // Failed transactions are counted and reported (a stray one does not throw the run away).
      resolve(JSON.parse(stdout))
    })
  })
}

/**
 * @param {(number | null)[]} values null where a run did not measure the figure (--idle 0)
 * @returns {{ min: number, median: number, max: number } | null}
 */
function spread (values) {
  if (values.some((v) => v === null)) return null
  const sorted = /** @type {number[]} */ (values).sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { min: sorted[0], median: Math.round(median * 100) / 100, max: sorted[sorted.length - 1] }
}

/** @type {Map<string, Figures[]>} */
const runs = new Map(entries.map((e) => [e.name, []]))
for (let round = 0; round < rounds; round++) {
  // Rotate the order, so that no server always runs first (a cold machine) or last.
  const order = entries.map((_, i) => entries[(i + round) % entries.length])
  for (const entry of order) {
    process.stderr.write(`coordinator-compare: round ${round + 1}/${rounds}: ${entry.name}\n`)
    const results = /** @type {Figures[]} */ (runs.get(entry.name))
    results.push(await runLoad(entry.args))
  }
}

const servers = Object.fromEntries(entries.map(({ name }) => {
  const results = /** @type {Figures[]} */ (runs.get(name))
  /** @type {Record<string, number>} */
  const errorCodes = {}
  for (const r of results) for (const [code, n] of Object.entries(r.errorCodes ?? {})) errorCodes[code] = (errorCodes[code] ?? 0) + n
  const errors = results.reduce((n, r) => n + r.errors, 0)
  const transactions = results.reduce((n, r) => n + r.transactions, 0)
  return [name, { ...Object.fromEntries(FIGURES.map((f) => [f, spread(results.map((r) => r[f]))])), transactions, errors, ...(errors > 0 ? { errorCodes } : {}) }]
}))
/** @type {Record<string, object>} per-round ratios of the coordinator's figures to another server's */
const ratios = {}
for (const ours of entries.filter((e) => e.name.startsWith('coordinator/'))) {
  for (const other of entries.filter((e) => !e.name.startsWith('coordinator/'))) {
    const a = /** @type {Figures[]} */ (runs.get(ours.name))
    const b = /** @type {Figures[]} */ (runs.get(other.name))
    ratios[`${ours.name} / ${other.name}`] = {
      tpsPerCoreS: spread(a.map((r, i) => Math.round(r.tpsPerCoreS / b[i].tpsPerCoreS * 100) / 100)),
      p99Ms: spread(a.map((r, i) => Math.round(r.p99Ms / b[i].p99Ms * 100) / 100)),
      bytesPerClient: spread(a.map((r, i) => r.bytesPerClient === null || b[i].bytesPerClient === null ? null : Math.round(r.bytesPerClient / /** @type {number} */ (b[i].bytesPerClient) * 100) / 100))
    }
  }
}
console.log(JSON.stringify({ rounds, seconds: Number(values.seconds), idle: Number(values.idle), servers, ratios }))
