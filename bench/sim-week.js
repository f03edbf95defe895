#!/usr/bin/env node
/**
 * The Etsy-scale run as a user would do it: a 7-day synthetic week of
 * 20 M requests (or --requests N), generated, replayed through Maygh and the
 * plug-in baseline in one pass. Twice, each in a fresh process so its peak
 * RSS is its own: with the input generated in the engines' thread (one
 * core), and in a worker thread beside it (the CLI's default with 2+ cores).
 * Prints wall time, rate, peak RSS, the ratio, and the savings.
 *
 *   node bench/sim-week.js [--requests N] [--seed N]
 */
import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../sim/src/config.js'
import { runSimulation } from '../sim/src/run/run.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000000' }, seed: { type: 'string', default: '1' }, child: { type: 'string' } } })

if (values.child !== undefined) {
  const config = resolveConfig({ seed: Number(values.seed) })
  const t0 = performance.now()
  const run = await runSimulation({ synthetic: 'etsy', generator: { days: 7, requests: Number(values.requests), seed: config.seed } }, config, { inputThread: values.child === 'thread' })
  const m = run.maygh
  console.log(JSON.stringify({
    seconds: (performance.now() - t0) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    requests: m.requests,
    clients: m.clients,
    objects: run.input.objects,
    savings: [m.savings, m.peerSavings, m.cacheSavings, m.oracleSavings, run.plugin?.savings ?? 0]
  }))
} else {
  console.log(`machine: ${availableParallelism()} cores, node ${process.version}`)
  /** @param {string} mode */
  const measure = (mode) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, '--requests', values.requests, '--seed', values.seed], { encoding: 'utf8' }))
  const here = measure('here')
  const thread = measure('thread')
  if (JSON.stringify(here.savings) !== JSON.stringify(thread.savings)) throw new Error('the variants disagree: ' + JSON.stringify([here.savings, thread.savings]))
  console.log(`requests: ${here.requests.toLocaleString('en-US')} from ${here.clients.toLocaleString('en-US')} clients for ${here.objects.toLocaleString('en-US')} objects over 7 days`)
  const line = (/** @type {string} */ name, /** @type {any} */ m) => console.log(`${name}: ${m.seconds.toFixed(1)} s wall (${(m.requests / m.seconds / 1e6).toFixed(2)} M req/s end to end, generation and plug-in pass included), peak RSS ${m.maxRssMiB.toFixed(0)} MiB`)
  line('input in the engines\' thread (one core)', here)
  line('input in a worker thread (two cores)', thread)
  console.log(`speed-up from the input thread: ${(here.seconds / thread.seconds).toFixed(2)}x`)
  const [s, p, c, o, plugin] = here.savings.map((/** @type {number} */ x) => (x * 100).toFixed(1) + '%')
  console.log(`savings: ${s} (peers ${p}, own store ${c}), oracle ${o}, plug-in ${plugin}`)
}
