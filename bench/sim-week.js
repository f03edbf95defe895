#!/usr/bin/env node
/**
 * The Etsy-scale run as a user would do it: a 7-day synthetic week of
 * 20 M requests (or --requests N), generated, replayed through Maygh and the
 * plug-in baseline in one pass. Prints wall time, replay rate and peak RSS.
 *
 *   node bench/sim-week.js [--requests N] [--seed N]
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { resolveConfig } from '../sim/src/config.js'
import { runSimulation } from '../sim/src/run.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000000' }, seed: { type: 'string', default: '1' } } })
const config = resolveConfig({ seed: Number(values.seed) })
const t0 = performance.now()
const run = await runSimulation({ synthetic: 'etsy', generator: { days: 7, requests: Number(values.requests), seed: config.seed } }, config)
const seconds = (performance.now() - t0) / 1000
const m = run.maygh
console.log(`machine: ${cpus().length} cores, node ${process.version}`)
const objects = /** @type {number} */ (run.input.objects)
console.log(`requests: ${m.requests.toLocaleString('en-US')} from ${m.clients.toLocaleString('en-US')} clients for ${objects.toLocaleString('en-US')} objects over 7 days`)
console.log(`wall time: ${seconds.toFixed(1)} s (${(m.requests / seconds / 1e6).toFixed(2)} M req/s end to end, generation and plug-in pass included)`)
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`)
console.log(`savings: ${(m.savings * 100).toFixed(1)}% (peers ${(m.peerSavings * 100).toFixed(1)}%, own store ${(m.cacheSavings * 100).toFixed(1)}%), oracle ${(m.oracleSavings * 100).toFixed(1)}%, plug-in ${((run.plugin?.savings ?? 0) * 100).toFixed(1)}%`)
