/**
 * A load-generating worker thread. It owns a share of the clients and runs
 * the commands the main thread sends (`{id, command, args}` → `{id, result}`
 * or `{id, error}`), one phase at a time: open and join the load clients, run
 * the transactions, close them, open idle clients, or flood.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { setTimeout as sleep } from 'node:timers/promises'
import { BenchClient } from './bench-client.js'
import { TrackerBenchClient } from './tracker-client.js'
import { PeerjsBenchClient } from './peerjs-client.js'
import { sriHash } from '../../client/manifest.js'
import { assetPool, closedLoop, openLoop, PageVisitor, randomAssets, TrafficStats } from './traffic.js'
import { flood } from './flood.js'

/** Sockets opened at once per worker while joining. */
const OPEN_CONCURRENCY = 100
/** How long transactions still in flight after the end may take before they count as errors. */
const GRACE_MS = 10_000

const { assets, server, signal, workload, pageAssets, pageOffers } = /** @type {Pick<import('./options.js').Options, 'assets' | 'server' | 'signal' | 'workload' | 'pageAssets' | 'pageOffers'>} */ (workerData)
BenchClient.offerInLookup = signal === 'offer'
const pool = assetPool(assets)
/** @typedef {import('./bench-client.js').LoadClient<unknown>} LoadClient */
/**
 * The server's protocol: WebTorrent's tracker speaks its own, the bare server the coordinator's.
 * @type {{ open: (url: string) => Promise<LoadClient> }}
 */
const Client = server === 'bittorrent-tracker' ? TrackerBenchClient : server === 'peerjs' ? PeerjsBenchClient : BenchClient
/** @typedef {LoadClient | PageVisitor} Visitor */
/** @type {import('./traffic.js').Runner[] | null} `--workload relay`: what the loops run, each a client signalling its partner */
let relayRunners = null
/** @type {Visitor[]} the load: clients joined once, or page visitors (`--workload page`) that open a socket per page */
let loadClients = []
/** @type {LoadClient[]} */
let idleClients = []

/**
 * @param {string[]} urls one per client: the coordinator it connects to
 * @param {number} have assets each client joins with, drawn from the pool
 * @param {(i: number) => string[]} [assetsOf] instead, the assets client `i` joins with
 * @returns {Promise<LoadClient[]>} the clients, open and joined
 */
async function openClients (urls, have, assetsOf) {
  /** @type {LoadClient[]} */
  const clients = new Array(urls.length)
  let next = 0
  const lane = async () => {
    while (next < urls.length) {
      const i = next++
      const client = await Client.open(urls[i])
      clients[i] = client
      await client.join(assetsOf?.(i) ?? randomAssets(pool, have))
    }
  }
  await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, urls.length) }, lane))
  return clients
}

/**
 * @param {Visitor[]} clients
 * @returns {Promise<number>} relayed `connect`s the clients had received
 */
async function closeClients (clients) {
  const signals = clients.reduce((sum, c) => sum + (c?.signalsIn ?? 0), 0)
  await Promise.all(clients.map((c) => c?.close()))
  return signals
}

/**
 * @param {{ seconds: number, rate: number | null, resetCounts: boolean }} args rate: this worker's
 *   share, or null for a closed loop; resetCounts: count relayed signals from this run on
 * @returns {Promise<import('./traffic.js').TrafficSummary>}
 */
async function run ({ seconds, rate, resetCounts }) {
  const stats = new TrafficStats()
  for (const client of loadClients) {
    if (resetCounts) client.signalsIn = 0
    client.unmatchedErrors = {} // this run's only
  }
  const until = performance.now() + seconds * 1000
  const runners = relayRunners ?? loadClients
  const done = rate === null ? closedLoop(runners, pool, stats, until) : openLoop(runners, pool, stats, { rate, until })
  const timeout = new AbortController()
  const finished = await Promise.race([
    done.then(() => true),
    sleep(seconds * 1000 + GRACE_MS, false, { signal: timeout.signal }).catch(() => true)
  ])
  timeout.abort()
  if (!finished) countUnanswered(loadClients, stats)
  for (const client of loadClients) {
    for (const [code, n] of Object.entries(client.unmatchedErrors)) stats.errors[code] = (stats.errors[code] ?? 0) + n
  }
  return stats.summary()
}

/**
 * Count the requests still unanswered after the grace period as errors
 * `BENCH_TIMEOUT_<type>`, so the report says which message went unanswered.
 *
 * @param {Visitor[]} clients
 * @param {TrafficStats} stats
 */
function countUnanswered (clients, stats) {
  for (const client of clients) {
    for (const { type } of client.pending.values()) {
      const code = `BENCH_TIMEOUT_${type}`
      stats.errors[code] = (stats.errors[code] ?? 0) + 1
    }
  }
}

/** @type {Record<string, (args: any) => Promise<unknown>>} */
const COMMANDS = {
  open: async ({ urls, have }) => {
    if (workload === 'page') {
      loadClients = urls.map((/** @type {string} */ url) => new PageVisitor(Client, url, randomAssets(pool, have), { pool, assets: pageAssets, offers: pageOffers }))
      return
    }
    if (workload !== 'relay') {
      loadClients = await openClients(urls, have)
      return
    }
    // Relay: each client holds an asset of its own, and signals the next client, introduced to it by a lookup of that asset.
    const salt = Math.random().toString(36).slice(2)
    const clients = await openClients(urls, 0, (i) => [sriHash(Buffer.from(`relay-${salt}-${i}`))])
    clients.forEach((c, i) => { c.partner = clients[(i + 1) % clients.length] })
    await Promise.all(clients.map((c) => c instanceof BenchClient ? c.introduce() : undefined))
    loadClients = clients
    relayRunners = clients.map((c) => ({ transaction: () => c.relay(), held: c.held, heldSet: c.heldSet }))
  },
  run,
  closeLoad: async () => {
    const signals = await closeClients(loadClients)
    loadClients = []
    relayRunners = null
    return signals
  },
  openIdle: async ({ urls, have }) => { idleClients = await openClients(urls, have) },
  closeIdle: async () => {
    await closeClients(idleClients)
    idleClients = []
  },
  flood: ({ url, seconds, reconnect }) => flood({ url, pool, seconds, reconnect })
}

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort)
port.on('message', async ({ id, command, args }) => {
  try {
    port.postMessage({ id, result: await COMMANDS[command](args) })
  } catch (err) {
    port.postMessage({ id, error: `${command}: ${/** @type {Error} */ (err).message}` })
  }
})
