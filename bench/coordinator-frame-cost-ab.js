#!/usr/bin/env node
/**
 * An A/B of bench/coordinator-frame-cost.js's workloads: this tree's
 * coordinator against another tree's (`--base`, e.g. a worktree of the parent
 * commit), each in its own in-process world (coordinator-load/frame-cost-world.js),
 * in one process, their runs alternated (base, new, new, base, …) so that what
 * else the machine does falls on both alike. The world started second measured
 * a few percent slower than the first in A/A runs, so the comparison runs twice,
 * each tree's world started first once (a child process each), and the ratio
 * reported is the geometric mean of the two runs' median pair ratios.
 *
 *   node bench/coordinator-frame-cost-ab.js --base ../wt-base [--workload transaction|relay]
 *     [--pairs 100] [--transactions 10000]
 */
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { openWorld } from './coordinator-load/frame-cost-world.js'
import { median } from './stats.js'

const USAGE = `usage: node bench/coordinator-frame-cost-ab.js --base DIR [--workload transaction|relay (transaction)]
  [--pairs N (100)] [--transactions N (10000)]

This tree's coordinator against DIR's (another checkout of this repository), per
bench/coordinator-frame-cost.js's workload, alternating runs of --transactions in one process,
--pairs pairs; twice, each tree's world started first once. Prints one JSON line: each order's
median µs per transaction of each tree and median ratio new/base, and their geometric mean.
`
const SELF = fileURLToPath(import.meta.url)
const HERE = resolve(SELF, '../..')

/**
 * One order: both worlds, `first` started first, their runs alternated.
 * @param {{ base: string, workload: string, pairs: number, transactions: number, first: string }} o
 */
async function compare ({ base, workload, pairs, transactions, first }) {
  const roots = /** @type {Record<string, string>} */ ({ base: resolve(base), new: HERE })
  /** @type {Record<string, import('./coordinator-load/frame-cost-world.js').FrameCostWorld>} */
  const worlds = {}
  for (const side of first === 'new' ? ['new', 'base'] : ['base', 'new']) {
    const { startCoordinator } = await import(pathToFileURL(`${roots[side]}/coordinator/src/server.js`).href)
    worlds[side] = await openWorld(startCoordinator, { workload, clients: 1000, assets: 2000, have: 20 })
  }
  try {
    for (const world of Object.values(worlds)) await world.run(transactions)
    /** @type {Record<string, number[]>} µs per transaction of each run */
    const us = { base: [], new: [] }
    for (let p = 0; p < pairs; p++) {
      for (const side of p % 2 === 0 ? ['base', 'new'] : ['new', 'base']) {
        const before = process.cpuUsage()
        await worlds[side].run(transactions)
        const { user, system } = process.cpuUsage(before)
        us[side].push((user + system) / transactions)
      }
    }
    const errors = worlds.base.counts().errors + worlds.new.counts().errors
    return { first, baseUs: median(us.base), newUs: median(us.new), ratio: median(us.new.map((n, i) => n / us.base[i])), errors }
  } finally {
    for (const world of Object.values(worlds)) await world.close()
  }
}

async function main () {
  const { values } = parseArgs({ options: { base: { type: 'string' }, workload: { type: 'string', default: 'transaction' }, pairs: { type: 'string', default: '100' }, transactions: { type: 'string', default: '10000' }, first: { type: 'string' }, help: { type: 'boolean' } } })
  if (values.help) return process.stdout.write(USAGE)
  const pairs = Number(values.pairs)
  const transactions = Number(values.transactions)
  if (values.base === undefined) throw new Error('--base is required')
  if (values.workload !== 'transaction' && values.workload !== 'relay') throw new Error(`--workload must be transaction or relay, got ${JSON.stringify(values.workload)}`)
  for (const [flag, n] of [['pairs', pairs], ['transactions', transactions]]) {
    if (!Number.isSafeInteger(n) || /** @type {number} */ (n) < 1) throw new Error(`--${flag} must be a positive integer`)
  }
  const o = { base: values.base, workload: values.workload, pairs, transactions }
  if (values.first !== undefined) {
    process.stdout.write(JSON.stringify(await compare({ ...o, first: values.first })) + '\n')
    return
  }
  // Each order in a process of its own (a tree's modules load once per process).
  const orders = ['base', 'new'].map((first) => JSON.parse(execFileSync(process.execPath, [SELF, '--base', o.base, '--workload', o.workload, '--pairs', String(pairs), '--transactions', String(transactions), '--first', first], { encoding: 'utf8' })))
  const ratio = Math.sqrt(orders[0].ratio * orders[1].ratio)
  process.stdout.write(JSON.stringify({ workload: o.workload, pairs, transactions, orders, ratio: Math.round(ratio * 1000) / 1000 }) + '\n')
}

main().catch((err) => {
  process.stderr.write(`coordinator-frame-cost-ab: ${err.message}\n${USAGE}`)
  process.exitCode = 2
})
