/**
 * The processes under test, started as children of the bench: coordinator
 * processes of `coordinator/bin/maygh-coordinator.js` (or, with `--server
 * bare`, of `bare-server.js`), each on a free port and ready once its /healthz
 * answers, and the store behind them — nothing, one redis-server, or a 6-node
 * Redis Cluster. Each comes with its pids, for the /proc readings, and a stop
 * function.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort, startRedisServer } from '../../test/support/redis-server.js'
import { startRedisCluster } from '../../test/support/redis-cluster.js'
import { Redis } from 'ioredis'
import { childPids } from './procfs.js'

const BIN = fileURLToPath(new URL('../../coordinator/bin/maygh-coordinator.js', import.meta.url))
/** Each `--server`'s script, all started with the coordinator's command line. */
const SCRIPTS = {
  coordinator: BIN,
  bare: fileURLToPath(new URL('./bare-server.js', import.meta.url)),
  'bittorrent-tracker': fileURLToPath(new URL('./tracker-server.js', import.meta.url)),
  peerjs: fileURLToPath(new URL('./peerjs-server.js', import.meta.url))
}
const CHILD_HOOKS = new URL('./child-hooks.js', import.meta.url).href
/** How long a coordinator may take to stop on SIGINT before it is killed. */
const STOP_TIMEOUT_MS = 5000
/** How long a coordinator may take to become healthy (a Redis Cluster store takes the longest). */
const START_TIMEOUT_MS = 20_000

/**
 * @typedef {object} CoordinatorProcess
 * @property {string} url its WebSocket URL
 * @property {string} statsUrl its HTTP `/stats`
 * @property {string | null} metricsUrl its `/metrics` (the coordinator's and the bare server's: the others have none)
 * @property {number} pid
 * @property {{ code: number | null, signal: string | null } | null} exit how it ended; null while it runs
 * @property {() => void} collectGarbage asks for a full garbage collection (SIGUSR2; done a moment later)
 * @property {() => Promise<void>} stop SIGINT, then SIGKILL after a while
 */

/**
 * Start a coordinator process on a free loopback port and wait until its
 * `/healthz` answers 200. Its stop function goes to `onSpawn` at once, so a
 * process that never becomes ready is stopped all the same.
 *
 * @param {{ server: import('./options.js').Options['server'], redisUrl: string | null, cpuProfDir: string | null, peerRateLimit: number }} options
 *   `server`: the coordinator's bin, the bare `ws` server (bare-server.js) or
 *   WebTorrent's tracker (tracker-server.js), which ignore the environment below
 *   but WS_NO_BUFFER_UTIL;
 *   `peerRateLimit`: messages/s one client may send; the bench lifts it by
 *   default, as each of its clients stands for many real peers
 * @param {(stop: () => Promise<void>) => void} onSpawn
 * @returns {Promise<CoordinatorProcess>} once it is ready
 */
export async function startCoordinatorProcess ({ server, redisUrl, cpuProfDir, peerRateLimit }, onSpawn) {
  const port = await freePort()
  const nodeArgs = ['--expose-gc', '--import', CHILD_HOOKS, ...(cpuProfDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', cpuProfDir])]
  const child = spawn(process.execPath, [...nodeArgs, SCRIPTS[server], '--port', String(port), '--stun-port', '0'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'silent',
      // \`ws\` as our package installs it, without the optional native masking addon that
      // bittorrent-tracker, a dev dependency for this bench, brings into node_modules.
      WS_NO_BUFFER_UTIL: '1',
      RATE_LIMIT_PER_SECOND: String(peerRateLimit),
      RATE_LIMIT_BURST: String(Math.min(2 * peerRateLimit, 1_000_000)),
      // Each client stands for many peers and meets new holders at the rate of many: no bound on them,
      // and one introduction carries all of a run's signals (--workload relay).
      NEW_HOLDER_BURST: '0',
      INTRODUCTION_SIGNAL_BYTES: String(16 * 1024 * 1024),
      INTRODUCTION_TTL_MS: '3600000',
      // Every bench client comes from 127.0.0.1; the bench's own check on `ulimit -n` bounds the count.
      MAX_CONNECTIONS_PER_IP: '0',
      MAX_CONNECTIONS: '10000000',
      ...(redisUrl === null ? {} : { REDIS_URL: redisUrl })
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  /** @type {CoordinatorProcess['exit']} */
  let exit = null
  const exited = once(child, 'exit').then(([code, signal]) => { exit = { code, signal } })
  const stop = async () => {
    if (exit !== null) return
    child.kill('SIGINT') // stop at once; SIGTERM would drain clients over DRAIN_WINDOW_MS first
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    await exited
    clearTimeout(timer)
  }
  onSpawn(stop)
  const httpUrl = `http://127.0.0.1:${port}`
  if (!await becomesHealthy(`${httpUrl}/healthz`, () => exit !== null)) {
    throw new Error(`a coordinator did not start (exit ${JSON.stringify(exit)}; its errors are above)`)
  }
  return {
    url: `ws://127.0.0.1:${port}`,
    statsUrl: `${httpUrl}/stats`,
    metricsUrl: server === 'coordinator' || server === 'bare' ? `${httpUrl}/metrics` : null,
    pid: /** @type {number} */ (child.pid),
    get exit () { return exit },
    collectGarbage: () => { if (exit === null) child.kill('SIGUSR2') },
    stop
  }
}

/**
 * @param {string} healthUrl
 * @param {() => boolean} hasExited
 * @returns {Promise<boolean>} true once `healthUrl` answers 200, false if the process exits first
 * @throws {Error} when neither happens within START_TIMEOUT_MS
 */
async function becomesHealthy (healthUrl, hasExited) {
  const deadline = performance.now() + START_TIMEOUT_MS
  while (performance.now() < deadline) {
    if (hasExited()) return false
    try {
      if ((await fetch(healthUrl)).ok) return true
    } catch {
      // not listening yet
    }
    await sleep(50)
  }
  throw new Error(`a coordinator did not answer ${healthUrl} with 200 within ${START_TIMEOUT_MS / 1000} s`)
}

/**
 * @typedef {object} StoreService
 * @property {string | null} url REDIS_URL for the coordinators; null for the in-process store
 * @property {number[]} pids the Redis servers' pids
 * @property {number[]} ports the Redis servers' ports (loopback), for their own counts ({@link redisCounts})
 * @property {() => Promise<void>} close
 */

/**
 * What the Redis servers have done so far, summed over them (INFO stats): commands
 * processed and bytes read and written on their client connections (replication
 * and cluster-bus traffic not counted).
 * @param {number[]} ports
 * @returns {Promise<{ commands: number, bytesIn: number, bytesOut: number }>}
 */
export async function redisCounts (ports) {
  const infos = await Promise.all(ports.map(async (port) => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
    try {
      await client.connect()
      return await client.info('stats')
    } finally {
      client.disconnect()
    }
  }))
  const field = (/** @type {string} */ info, /** @type {string} */ name) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0)
  return {
    commands: sum(infos.map((i) => field(i, 'total_commands_processed'))),
    bytesIn: sum(infos.map((i) => field(i, 'total_net_input_bytes'))),
    bytesOut: sum(infos.map((i) => field(i, 'total_net_output_bytes')))
  }
}

/** @param {number[]} values */
const sum = (values) => values.reduce((a, b) => a + b, 0)

/**
 * @param {'memory' | 'redis' | 'cluster'} kind
 * @returns {Promise<StoreService>}
 */
export async function startStore (kind) {
  if (kind === 'memory') return { url: null, pids: [], ports: [], close: async () => {} }
  if (kind === 'redis') {
    const redis = await startRedisServer()
    const pid = /** @type {number} */ (redis.process.pid)
    return { url: redis.url, pids: [pid], ports: [redis.port], close: redis.close }
  }
  const cluster = await startRedisCluster()
  // The cluster helper does not hand out pids; its servers are this process's only redis-server children.
  const pids = childPids(process.pid, 'redis-server')
  if (pids.length !== cluster.nodes.length) {
    await cluster.close()
    throw new Error(`found ${pids.length} redis-server children, expected the cluster's ${cluster.nodes.length}`)
  }
  return { url: cluster.url, pids, ports: cluster.nodes.map((n) => n.port), close: cluster.close }
}
