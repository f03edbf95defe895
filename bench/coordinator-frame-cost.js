#!/usr/bin/env node
/**
 * The coordinator's own CPU per transaction, without sockets: a coordinator on
 * the in-process store is handed connections whose `ws` is a stand-in that
 * keeps what it is sent, and each client's frames go straight to the
 * coordinator's message handler. What is timed is everything the coordinator
 * does per frame — the rate limit, the envelope and field checks, the
 * handlers, the store, the introductions, the replies' and relayed offers'
 * JSON — and nothing of `ws` framing, the kernel or a load generator, which
 * bench/coordinator-load.js measures with the rest. So an A/B of a change to
 * that work reads a few percent here where the end-to-end bench's spread on a
 * shared 2-core machine is ±15 %.
 *
 * One transaction is bench/coordinator-load.js's: a lookup of an asset with an
 * offer (handed to the first holder named), then an update swapping one asset.
 * With `--workload relay`, one transaction is one relayed signal, as in that
 * bench's relay workload: each client, introduced to its partner (the next
 * client) by a lookup, sends it a trickled ICE candidate (`connect`, no `ref`);
 * its frames are built before the runs, so what is timed is the coordinator's alone.
 * Prints one JSON line: µs of CPU per transaction per run, and their median.
 *
 *   node bench/coordinator-frame-cost.js [--workload transaction|relay] [--clients 1000]
 *     [--assets 2000] [--have 20] [--transactions 200000] [--runs 3]
 */
import { parseArgs } from 'node:util'
import { startCoordinator } from '../coordinator/src/server.js'
import { openWorld } from './coordinator-load/frame-cost-world.js'
import { median } from './stats.js'

const USAGE = `usage: node bench/coordinator-frame-cost.js [--workload transaction|relay (transaction)]
  [--clients N (1000)] [--assets N (2000)] [--have N (20)] [--transactions N (200000)] [--runs N (3)]

The coordinator's own CPU per transaction (a lookup with an offer, then an update swapping one
asset), in process, without sockets: --clients clients each holding --have of --assets made-up
assets; --runs measured runs of --transactions each (a quarter as many warm up first). Prints
one JSON line: µs of CPU per transaction per run, their median, and the error replies (0).
--workload relay: a transaction is one ICE candidate relayed from a client to its partner
(--assets and --have unused).
`
const FLAGS = /** @type {const} */ ({ clients: 1000, assets: 2000, have: 20, transactions: 200_000, runs: 3 })

/** @returns {(Record<keyof typeof FLAGS, number> & { workload: string }) | null} the flags' values; null after --help */
function options () {
  const { values } = parseArgs({ options: { ...Object.fromEntries(Object.keys(FLAGS).map((f) => [f, { type: 'string' }])), workload: { type: 'string', default: 'transaction' }, help: { type: 'boolean' } } })
  if (values.help) {
    process.stdout.write(USAGE)
    return null
  }
  const { workload } = values
  if (workload !== 'transaction' && workload !== 'relay') throw new Error(`--workload must be transaction or relay, got ${JSON.stringify(workload)}`)
  const read = /** @type {Record<keyof typeof FLAGS, number> & { workload: string }} */ ({ ...FLAGS, workload })
  for (const flag of /** @type {(keyof typeof FLAGS)[]} */ (Object.keys(FLAGS))) {
    const given = /** @type {Record<string, unknown>} */ (values)[flag]
    if (given === undefined) continue
    const n = Number(given)
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${JSON.stringify(given)}`)
    read[flag] = n
  }
  if (read.have > read.assets) throw new Error('--have must not be above --assets')
  return read
}

async function main () {
  const read = options()
  if (read === null) return
  const { workload, clients, assets, have, transactions, runs } = read
  const world = await openWorld(startCoordinator, { workload, clients, assets, have })
  try {
    await world.run(Math.ceil(transactions / 4))
    /** @type {number[]} */
    const usPerTx = []
    for (let r = 0; r < runs; r++) {
      const before = process.cpuUsage()
      await world.run(transactions)
      const { user, system } = process.cpuUsage(before)
      usPerTx.push(Math.round((user + system) / transactions * 100) / 100)
    }
    const { errors, sent, signals } = world.counts()
    // to 0.01 µs, as each run's figure
    const medianUsPerTx = Math.round(median(usPerTx) * 100) / 100
    process.stdout.write(JSON.stringify({ workload, clients, assets, have, transactions, runs, usPerTx, medianUsPerTx, errors, framesSent: sent, signals }) + '\n')
  } finally {
    await world.close()
  }
}

main().catch((err) => {
  process.stderr.write(`coordinator-frame-cost: ${err.message}\n${USAGE}`)
  process.exitCode = 2
})
