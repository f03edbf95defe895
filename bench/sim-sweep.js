#!/usr/bin/env node
/**
 * A sweep as a user runs it: the main run of the synthetic week plus
 * `--sweep linger=0,60,300,1800` (5 replays), once with every run in one
 * thread after another (--jobs 1) and once with one worker thread a core
 * (--jobs = cores). Each variant runs in a fresh process so its peak RSS is
 * its own. Prints wall time, peak RSS and the speed-up; checks that both
 * variants gave the same savings.
 *
 *   node bench/sim-sweep.js [--requests N]
 */
import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../sim/src/config.js'
import { runJobs } from '../sim/src/run-pool.js'
import { parseSweep, sweepJobs } from '../sim/src/sweep.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000000' }, jobs: { type: 'string' }, child: { type: 'boolean' } } })
const SWEEP = 'linger=0,60,300,1800'

if (values.child) {
  const config = resolveConfig({})
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { days: 7, requests: Number(values.requests), seed: config.seed } }
  const t0 = performance.now()
  const results = await runJobs([{ source, config }, ...sweepJobs(source, config, parseSweep(SWEEP))], { parallel: Number(values.jobs) })
  console.log(JSON.stringify({
    seconds: (performance.now() - t0) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    requests: results[0].maygh.requests,
    savings: results.map((r) => r.maygh.savings)
  }))
} else {
  const cores = availableParallelism()
  console.log(`machine: ${cores} cores, node ${process.version}; main run + --sweep ${SWEEP} = 5 replays of the synthetic week`)
  /** @param {number} jobs */
  const measure = (jobs) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--jobs', String(jobs), '--requests', values.requests], { encoding: 'utf8' }))
  const one = measure(1)
  const many = measure(cores)
  if (JSON.stringify(one.savings) !== JSON.stringify(many.savings)) throw new Error('the variants disagree: ' + JSON.stringify([one.savings, many.savings]))
  const line = (/** @type {string} */ name, /** @type {any} */ m) => console.log(`${name}: ${m.seconds.toFixed(1)} s wall (${(5 * m.requests / m.seconds / 1e6).toFixed(2)} M requests/s over the 5 replays), peak RSS ${m.maxRssMiB.toFixed(0)} MiB`)
  console.log(`requests a replay: ${one.requests.toLocaleString('en-US')}`)
  line('--jobs 1', one)
  line(`--jobs ${cores}`, many)
  console.log(`speed-up with ${cores} jobs: ${(one.seconds / many.seconds).toFixed(2)}x (same savings: ${one.savings.map((/** @type {number} */ s) => (s * 100).toFixed(1) + '%').join(', ')})`)
}
