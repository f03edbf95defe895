/**
 * The load generator's flags: one defaults object, parsed and checked once,
 * then frozen. A bad flag is a {@link UsageError}, which the entry point prints
 * with a pointer to --help and exits 2 on.
 */
import { parseArgs } from 'node:util'
import { LIMITS } from '../../protocol/index.js'
import { openFilesLimit } from './procfs.js'

export const USAGE = `Usage: npm run bench:coordinator -- [options]
       node bench/coordinator-load.js [options]

Starts coordinator processes (and Redis for the Redis stores) on loopback, joins
clients, runs lookup (with an offer) → update transactions for a fixed time, then
measures the coordinators' memory per idle client. Prints one JSON line.

  --server S      coordinator | bare | bittorrent-tracker | peerjs (default coordinator). bare runs
                  a bare \`ws\` server instead (coordinator-load/bare-server.js) that answers
                  the same traffic with the same frames and does nothing else: the cost
                  floor the coordinator's figures compare with. bittorrent-tracker runs
                  WebTorrent's WebSocket tracker, its clients doing the same transactions
                  in its protocol (coordinator-load/tracker-client.js). Both need
                  --store memory and --processes 1; bittorrent-tracker cannot take --flood
  --processes N   coordinator processes (default 1; more than 1 needs a Redis store)
  --store S       memory | redis | cluster (default memory; cluster = 6-node Redis Cluster)
  --seconds S     length of the measured transaction phase (default 10)
  --warmup S      unmeasured transactions before it, so the JIT has compiled the hot paths (default 2)
  --clients C     clients running transactions, spread evenly over the coordinators (default 1000)
  --have H        assets each client holds, changed by one per transaction (default 20)
  --assets A      size of the pool of made-up assets (default 2000)
  --workers W     load-generating worker threads (default 1)
  --rate R        open loop: R transactions/s in total, paced per worker (default: closed loop,
                  one transaction in flight per client)
  --flood         add one client that sends lookups as fast as it can without waiting for
                  replies; the figures are the other clients'. Runs --flood-rounds pairs of
                  --seconds windows, one without the flood and one with a fresh flooding
                  client, and reports the others' p99 in both (floodP99Ratio)
  --flood-rounds N
                  pairs of windows with --flood (default 3)
  --flood-reconnect
                  with --flood, the flooding client opens a new socket and joins again
                  whenever the coordinator cuts it off (floodRepliesPerS: what it gets)
  --peer-rate-limit N
                  messages/s each client may send (burst 2N); default lifted (1000000), as each
                  bench client stands for many peers. With --flood, give the production
                  default (200) to test the defence a flood meets in production
  --signal S      offer (default): the lookup carries the client's offer (protocol 3, what the
                  browser client does; the coordinator hands it to the holder it names: 2 frames in,
                  3 out); connect: a lookup, then a connect with the offer to the first holder
                  (3 in, 4 out). The tracker always announces with its offer
  --workload W    transaction (default): the lookup-and-swap above, on clients joined once;
                  page: page views of the demo shop, each on a socket of its own as a page's
                  script opens one: join, the page's lookups and 3 offers to holders, the
                  announcement of what it fetched, close (the coordinator: join, one lookup of
                  every asset with the offers, one update; the tracker: an announce per asset
                  held, one per page asset (3 with an offer), one completed per page asset).
                  tps is then page views per second
  --page-assets N assets on a page (default 40, at most 64)
                  relay: relay only, each client signalling its partner (the next client) one
                  ICE candidate after another, timed until the partner has it; the coordinator's
                  clients are introduced once (a lookup) and send connect without a ref (no
                  acknowledgement, as trickled candidates go); --server peerjs runs PeerJS's
                  server (peerjs-server) on the same work
  --idle I        idle clients joined afterwards to measure memory per client (default 10000; 0 skips)
  --cpu-prof DIR  run the coordinators under node --cpu-prof, writing profiles to DIR
  --help          this text
`

const defaults = {
  server: /** @type {'coordinator' | 'bare' | 'bittorrent-tracker' | 'peerjs'} */ ('coordinator'),
  processes: 1,
  store: /** @type {'memory' | 'redis' | 'cluster'} */ ('memory'),
  seconds: 10,
  warmup: 2,
  clients: 1000,
  have: 20,
  assets: 2000,
  workers: 1,
  rate: /** @type {number | null} */ (null),
  flood: false,
  floodRounds: 3,
  floodReconnect: false,
  peerRateLimit: 1_000_000,
  signal: /** @type {'offer' | 'connect'} */ ('offer'),
  workload: /** @type {'transaction' | 'page' | 'relay'} */ ('transaction'),
  pageAssets: 40,
  pageOffers: 3,
  idle: 10000,
  cpuProf: /** @type {string | null} */ (null)
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
const DEFAULTS = Object.freeze(defaults)

/** @typedef {typeof DEFAULTS} Options */

const STORES = ['memory', 'redis', 'cluster']
const SERVERS = ['coordinator', 'bare', 'bittorrent-tracker', 'peerjs']

export class UsageError extends Error {}

/**
 * @param {string[]} argv the arguments after the script
 * @returns {Readonly<Options> | null} the options, or null when --help was asked for
 * @throws {UsageError}
 */
export function parseOptions (argv) {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        server: { type: 'string' },
        processes: { type: 'string' },
        store: { type: 'string' },
        seconds: { type: 'string' },
        warmup: { type: 'string' },
        clients: { type: 'string' },
        have: { type: 'string' },
        assets: { type: 'string' },
        workers: { type: 'string' },
        rate: { type: 'string' },
        flood: { type: 'boolean' },
        'flood-rounds': { type: 'string' },
        'flood-reconnect': { type: 'boolean' },
        'peer-rate-limit': { type: 'string' },
        signal: { type: 'string' },
        workload: { type: 'string' },
        'page-assets': { type: 'string' },
        idle: { type: 'string' },
        'cpu-prof': { type: 'string' },
        help: { type: 'boolean' }
      }
    }))
  } catch (err) {
    throw new UsageError(/** @type {Error} */ (err).message)
  }
  if (values.help) return null
  const store = values.store ?? DEFAULTS.store
  if (!STORES.includes(store)) throw new UsageError(`--store must be one of ${STORES.join(', ')}, got "${store}"`)
  const signal = values.signal ?? DEFAULTS.signal
  if (signal !== 'offer' && signal !== 'connect') throw new UsageError(`--signal must be offer or connect, got "${signal}"`)
  const workload = values.workload ?? DEFAULTS.workload
  if (!['transaction', 'page', 'relay'].includes(workload)) throw new UsageError(`--workload must be transaction, page or relay, got "${workload}"`)
  const server = values.server ?? DEFAULTS.server
  if (!SERVERS.includes(server)) throw new UsageError(`--server must be one of ${SERVERS.join(', ')}, got "${server}"`)
  const options = {
    server: /** @type {Options['server']} */ (server),
    processes: integer(values.processes, 'processes', DEFAULTS.processes, 1, 64),
    store: /** @type {Options['store']} */ (store),
    seconds: number(values.seconds, 'seconds', DEFAULTS.seconds, 0.1, 3600),
    warmup: number(values.warmup, 'warmup', DEFAULTS.warmup, 0, 600),
    clients: integer(values.clients, 'clients', DEFAULTS.clients, 1, 1_000_000),
    have: integer(values.have, 'have', DEFAULTS.have, 1, LIMITS.maxAssetsPerMessage),
    assets: integer(values.assets, 'assets', DEFAULTS.assets, 2, 1_000_000),
    workers: integer(values.workers, 'workers', DEFAULTS.workers, 1, 64),
    rate: values.rate === undefined ? null : number(values.rate, 'rate', 0, 1, 10_000_000),
    flood: values.flood ?? DEFAULTS.flood,
    floodRounds: integer(values['flood-rounds'], 'flood-rounds', DEFAULTS.floodRounds, 1, 100),
    floodReconnect: values['flood-reconnect'] ?? DEFAULTS.floodReconnect,
    peerRateLimit: integer(values['peer-rate-limit'], 'peer-rate-limit', DEFAULTS.peerRateLimit, 1, 1_000_000),
    signal: /** @type {Options['signal']} */ (signal),
    workload: /** @type {Options['workload']} */ (workload),
    pageAssets: integer(values['page-assets'], 'page-assets', DEFAULTS.pageAssets, 1, 64),
    pageOffers: DEFAULTS.pageOffers,
    idle: integer(values.idle, 'idle', DEFAULTS.idle, 0, 1_000_000),
    cpuProf: values['cpu-prof'] ?? DEFAULTS.cpuProf
  }
  if (options.have >= options.assets) throw new UsageError(`--have (${options.have}) must be less than --assets (${options.assets}), so a client always has an asset to add`)
  if (options.server !== 'coordinator' && (options.store !== 'memory' || options.processes !== 1)) {
    throw new UsageError(`--server ${options.server} is one process with no store: use --store memory and --processes 1, got --store ${options.store} and --processes ${options.processes}`)
  }
  if ((options.server === 'peerjs' && options.workload !== 'relay') || (options.workload === 'relay' && options.server === 'bittorrent-tracker')) {
    throw new UsageError('--server peerjs takes only --workload relay, and bittorrent-tracker does not relay on its own')
  }
  if (options.workload === 'relay' && options.flood) throw new UsageError('--workload relay takes no --flood')
  if (options.workload === 'page' && (options.flood || options.signal !== 'offer')) throw new UsageError('--workload page is the browser client\'s page view: its lookup carries its offers, and it takes no --flood')
  if (options.pageAssets + options.have > options.assets) throw new UsageError(`--page-assets (${options.pageAssets}) and --have (${options.have}) must fit in --assets (${options.assets})`)
  if (options.floodReconnect && !options.flood) throw new UsageError('--flood-reconnect is a way of flooding: add --flood')
  if (options.server === 'bittorrent-tracker' && options.flood) {
    throw new UsageError('--flood sends the coordinator\'s lookups, which bittorrent-tracker does not speak: leave it out with --server bittorrent-tracker')
  }
  if (options.store === 'memory' && options.processes > 1) {
    throw new UsageError('--store memory keeps its maps inside one coordinator process, so processes cannot share them: use --processes 1, or --store redis or cluster')
  }
  if (options.workers > options.clients) throw new UsageError(`--workers (${options.workers}) must not exceed --clients (${options.clients})`)
  return Object.freeze(options)
}

/**
 * @param {string | undefined} text
 * @param {string} name
 * @param {number} fallback
 * @param {number} min
 * @param {number} max
 * @returns {number}
 */
function number (text, name, fallback, min, max) {
  if (text === undefined) return fallback
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a number from ${min} to ${max}, got "${text}"`)
  }
  return value
}

/**
 * @param {string | undefined} text
 * @param {string} name
 * @param {number} fallback
 * @param {number} min
 * @param {number} max
 * @returns {number}
 */
function integer (text, name, fallback, min, max) {
  const value = number(text, name, fallback, min, max)
  if (!Number.isInteger(value)) throw new UsageError(`--${name} must be an integer, got "${text}"`)
  return value
}

/** File descriptors kept free beside the clients' sockets (the bench's own files, pipes, Redis links). */
const FD_MARGIN = 200

/**
 * Whether the run's client sockets fit under `ulimit -n` (checked by the load
 * generator before it starts, and by bench:compare before its first run).
 *
 * @param {Readonly<Options>} options
 * @throws {UsageError} when the sockets would not fit
 */
export function checkFileLimit (options) {
  // Phase 2's clients are closed before phase 3's open, so the larger of the two counts.
  const sockets = Math.max(options.clients + (options.flood ? 1 : 0), options.idle)
  const limit = openFilesLimit()
  if (sockets + FD_MARGIN > limit) {
    throw new UsageError(`${sockets} client sockets need more open files than ulimit -n (${limit}) allows; raise it or lower --clients / --idle`)
  }
}
