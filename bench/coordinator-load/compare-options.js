/**
 * bench:compare's flags and its plan: which servers do each workload's work,
 * and the load generator's flags for each run of each phase. Every run's flags
 * are checked by the load generator's own parser before the first run starts.
 */
import { parseArgs } from 'node:util'
import { checkFileLimit, parseOptions, UsageError } from './options.js'

/** @typedef {'transaction' | 'page' | 'relay'} Workload */

export const USAGE = `Usage: npm run bench:compare -- [options]

Runs the coordinator (in-process store and Redis), bittorrent-tracker, peerjs-server and a bare
\`ws\` server on the same work, one load-generator run each (coordinator-load.js): throughput per
workload in rounds, then latency at half the coordinator's maximum rate, then memory per idle
client. Prints one JSON line, with each target of issue 25 met or not. Defaults: 50 runs, about
14 minutes on a 2-core machine.

  --rounds R      rounds of each phase with rounds, the order rotated each round (default 3)
  --seconds S     measured seconds of each throughput and latency run (default 6)
  --warmup S      unmeasured seconds before them (default 2)
  --workload W    transaction | page | relay: that workload only (default all three). The latency
                  phase runs on the transaction workload, or on the one given
  --rate R        the latency phase's fixed rate, transactions/s, instead of half the coordinator's
                  (in-process store) median maximum; needed for --phases latency alone
  --no-redis      leave out the coordinator on Redis (included by default; --redis is accepted)
  --idle I        idle clients of the memory phase, one run per server (default 10000; 0 skips
                  it); must fit under ulimit -n with 200 to spare
  --signal S      offer (default) | connect: how the transaction workload's lookup signals
  --page-clients N
                  visitors viewing pages at once in the page workload (default 100). A page costs the
                  tracker 100 announces one after another: 1,000 visitors at once (the load
                  generator's --clients) made each of its pages take longer than a run and its 10 s
                  of grace, and it completed none (BENCH_TIMEOUT_*); 100 still saturate every server
  --phases P      which phases, comma-separated: throughput,latency,memory (default all)
  --help          this text
`

/** Each server's flags to the load generator. */
export const SERVERS = Object.freeze({
  'coordinator/memory': ['--server', 'coordinator', '--store', 'memory'],
  'coordinator/redis': ['--server', 'coordinator', '--store', 'redis'],
  'bittorrent-tracker': ['--server', 'bittorrent-tracker'],
  'peerjs-server': ['--server', 'peerjs'],
  'bare ws': ['--server', 'bare']
})
/** @typedef {keyof typeof SERVERS} ServerName */
export const OURS = /** @type {ServerName[]} */ (['coordinator/memory', 'coordinator/redis'])
/** The signalling server people run today for each workload's work. */
export const INCUMBENT = /** @type {Record<Workload, ServerName>} */ ({ transaction: 'bittorrent-tracker', page: 'bittorrent-tracker', relay: 'peerjs-server' })
export const WORKLOADS = /** @type {Workload[]} */ (['transaction', 'page', 'relay'])
export const PHASES = ['throughput', 'latency', 'memory']
/** The memory phase's load: phase 2 as short as the load generator allows; phase 3 is what is read. */
const MEMORY_LOAD = ['--clients', '2', '--seconds', '0.1', '--warmup', '0']
/**
 * @param {string[]} argv
 * @returns {Readonly<{ rounds: number, seconds: string, warmup: string, idle: number, rate: number | null, signal: string | undefined,
 *   pageClients: string | undefined, workloads: Workload[], redis: boolean, phases: string[] }> | null} null for --help
 * @throws {UsageError}
 */
export function parseFlags (argv) {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        rounds: { type: 'string', default: '3' },
        seconds: { type: 'string', default: '6' },
        warmup: { type: 'string', default: '2' },
        idle: { type: 'string', default: '10000' },
        rate: { type: 'string' },
        signal: { type: 'string' },
        'page-clients': { type: 'string', default: '100' },
        workload: { type: 'string' },
        redis: { type: 'boolean' },
        'no-redis': { type: 'boolean' },
        phases: { type: 'string', default: PHASES.join(',') },
        help: { type: 'boolean', default: false }
      }
    }))
  } catch (err) {
    throw new UsageError(/** @type {Error} */ (err).message)
  }
  if (values.help) return null
  const rounds = Number(values.rounds)
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new UsageError(`--rounds must be an integer from 1 to 20, got "${values.rounds}"`)
  if (values.workload !== undefined && !WORKLOADS.includes(/** @type {Workload} */ (values.workload))) {
    throw new UsageError(`--workload must be one of ${WORKLOADS.join(', ')}, got "${values.workload}"`)
  }
  if (values.redis && values['no-redis']) throw new UsageError('--redis and --no-redis contradict each other')
  const phases = values.phases.split(',').map((p) => p.trim())
  const unknown = phases.find((p) => !PHASES.includes(p))
  if (unknown !== undefined || phases.length === 0) throw new UsageError(`--phases takes ${PHASES.join(', ')}, comma-separated; got "${values.phases}"`)
  if (values['page-clients'] !== undefined) {
    try {
      parseOptions(['--workload', 'page', '--clients', values['page-clients']])
    } catch (err) {
      throw new UsageError(/** @type {Error} */ (err).message.replace('--clients', '--page-clients'))
    }
  }
  // Checked by the load generator's own parser, as every run's flags are (checkRuns); these two are used here too.
  const { idle, rate } = /** @type {NonNullable<ReturnType<typeof parseOptions>>} */ (parseOptions(['--idle', values.idle, ...(values.rate === undefined ? [] : ['--rate', values.rate])]))
  if (phases.includes('latency') && !phases.includes('throughput') && rate === null) {
    throw new UsageError('the latency phase runs at half the maximum rate the throughput phase measures: give --rate R to run it alone')
  }
  return Object.freeze({
    rounds,
    seconds: values.seconds,
    warmup: values.warmup,
    idle,
    rate,
    signal: values.signal,
    pageClients: values['page-clients'],
    workloads: values.workload === undefined ? WORKLOADS : /** @type {Workload[]} */ ([values.workload]),
    redis: !values['no-redis'],
    phases: idle === 0 ? phases.filter((p) => p !== 'memory') : phases
  })
}

/** @typedef {NonNullable<ReturnType<typeof parseFlags>>} Flags */

/**
 * @param {Flags} flags
 * @param {Workload} workload
 * @returns {ServerName[]} the servers that do this workload's work, in the order of a first round
 */
export function serversOf (flags, workload) {
  return /** @type {ServerName[]} */ (['coordinator/memory', 'coordinator/redis', INCUMBENT[workload], 'bare ws']).filter((s) => flags.redis || s !== 'coordinator/redis')
}

/**
 * @param {Flags} flags
 * @param {Workload} workload
 * @param {number | null} rate
 * @returns {string[]} the load generator's flags for a throughput (rate null) or latency run, but the server's
 */
export function workloadArgs (flags, workload, rate) {
  return ['--workload', workload, '--seconds', flags.seconds, '--warmup', flags.warmup, '--idle', '0',
    ...(workload === 'transaction' && flags.signal !== undefined ? ['--signal', flags.signal] : []),
    ...(workload === 'page' && flags.pageClients !== undefined ? ['--clients', flags.pageClients] : []),
    ...(rate === null ? [] : ['--rate', String(rate)])]
}

/**
 * @param {Flags} flags
 * @param {ServerName} server
 * @returns {string[]} the load generator's flags for the memory phase's run of `server`
 */
export function memoryArgs (flags, server) {
  return [...SERVERS[server], '--workload', server === 'peerjs-server' ? 'relay' : 'transaction', ...MEMORY_LOAD, '--idle', String(flags.idle)]
}

/**
 * @param {Flags} flags
 * @returns {Workload} the workload the latency phase runs
 */
export function latencyWorkload (flags) {
  return flags.workloads.includes('transaction') ? 'transaction' : flags.workloads[0]
}

/**
 * @param {Flags} flags
 * @returns {ServerName[]} the latency phase's servers: the coordinator, the bare server, and for information the incumbent
 */
export function latencyServers (flags) {
  return ['coordinator/memory', 'bare ws', INCUMBENT[latencyWorkload(flags)]]
}

/**
 * @param {Flags} flags
 * @returns {ServerName[]} the memory phase's servers: every server of the workloads run
 */
export function memoryServers (flags) {
  const used = new Set(flags.workloads.flatMap((w) => serversOf(flags, w)))
  return /** @type {ServerName[]} */ (Object.keys(SERVERS)).filter((s) => used.has(s))
}

/**
 * Every run's flags checked by the load generator's own parser before the
 * first starts, so that a bad flag stops the comparison at once, not after
 * ten minutes (the latency phase's rate, not known yet, checked as 1/s).
 *
 * @param {Flags} flags
 * @throws {UsageError}
 */
export function checkRuns (flags) {
  const runs = []
  if (flags.phases.includes('throughput')) for (const w of flags.workloads) for (const s of serversOf(flags, w)) runs.push([...SERVERS[s], ...workloadArgs(flags, w, null)])
  if (flags.phases.includes('latency')) for (const s of latencyServers(flags)) runs.push([...SERVERS[s], ...workloadArgs(flags, latencyWorkload(flags), flags.rate ?? 1)])
  if (flags.phases.includes('memory')) for (const s of memoryServers(flags)) runs.push(memoryArgs(flags, s))
  for (const args of runs) checkFileLimit(/** @type {NonNullable<ReturnType<typeof parseOptions>>} */ (parseOptions(args)))
}
