#!/usr/bin/env node
/**
 * A sweep as a user runs it: the main run of the synthetic week plus
 * `--sweep linger=0,60,300,1800` (5 replays), three ways: every run in one
 * thread after another, input included (one core); runs one after another,
 * each reading its input in a worker thread beside it (`--jobs 1`, the
 * default for a single run); and one run a core at once (`--jobs` = cores,
 * the default with sweeps). Each variant runs in a fresh process so its peak
 * RSS is its own. Prints wall time, peak RSS and the speed-ups; checks that
 * every variant gave the same savings.
 *
 *   node bench/sim-sweep.js [--requests N]
 */
import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../sim/src/config.js'
import { runJobs } from '../sim/src/run/run-pool.js'
import { parseSweep, sweepJobs } from '../sim/src/run/sweep.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000000' }, jobs: { type: 'string' }, 'input-thread': { type: 'string' }, child: { type: 'boolean' } } })
const SWEEP = 'linger=0,60,300,1800'

if (values.child) {
  const config = resolveConfig({})
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { days: 7, requests: Number(values.requests), seed: config.seed } }
  const t0 = performance.now()
  const results = await runJobs([{ source, config }, ...sweepJobs(source, config, parseSweep(SWEEP))], { parallel: Number(values.jobs), inputThread: values['input-thread'] === 'yes' })
  console.log(JSON.stringify({
    seconds: (performance.now() - t0) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    requests: results[0].maygh.requests,
    savings: results.map((r) => r.maygh.savings)
  }))
} else {
  const cores = availableParallelism()
  console.log(`machine: ${cores} cores, node ${process.version}; main run + --sweep ${SWEEP} = 5 replays of the synthetic week`)
  /**
   * @param {number} jobs
   * @param {boolean} inputThread
   */
  const measure = (jobs, inputThread) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--jobs', String(jobs), '--input-thread', inputThread ? 'yes' : 'no', '--requests', values.requests], { encoding: 'utf8' }))
  const variants = [
    ['one thread (--jobs 1, input in the same thread)', measure(1, false)],
    ['--jobs 1, each run\'s input in a worker beside it', measure(1, true)],
    [`--jobs ${cores}, one run a core`, measure(cores, false)]
  ]
  const base = variants[0][1]
  for (const [, m] of variants) {
    if (JSON.stringify(m.savings) !== JSON.stringify(base.savings)) throw new Error('the variants disagree: ' + JSON.stringify(variants))
  }
  console.log(`requests a replay: ${base.requests.toLocaleString('en-US')}`)
  for (const [name, m] of variants) {
    console.log(`${name}: ${m.seconds.toFixed(1)} s wall (${(5 * m.requests / m.seconds / 1e6).toFixed(2)} M requests/s over the 5 replays), peak RSS ${m.maxRssMiB.toFixed(0)} MiB, ${(base.seconds / m.seconds).toFixed(2)}x one thread`)
  }
  console.log(`same savings in every variant: ${base.savings.map((/** @type {number} */ s) => (s * 100).toFixed(1) + '%').join(', ')}`)
}
