#!/usr/bin/env node
/**
 * What a Redis Cluster master failover costs the coordinator tier (issue 24):
 * a 6-node Cluster (3 masters, 3 replicas, cluster-node-timeout 5 s), two
 * coordinator processes A and B at their defaults, one client on A holding
 * `--assets` assets (spread over the masters by their slots), one on B looking
 * every asset up every 250 ms. Then one master is SIGKILLed (by default the one
 * the registry's first copy lives on, `{r}`, which before the registry had
 * copies was every shard's only liveness source), and the rounds go on until
 * its replica has taken over and every asset is found again.
 *
 * Prints the share of lookups answered with the holder while the master was
 * down (split by whether the asset's holder list lived on the dead master: the
 * rest is what should still be found), how long until every asset was found
 * again (and until the holder's next change was accepted), and how long each
 * coordinator's `/readyz` said 503.
 *
 *   node bench/cluster-failover.js [--assets 30] [--victim registry|other] [--full-coverage] [--json]
 *
 * `--full-coverage` runs the Cluster at Redis's default
 * `cluster-require-full-coverage yes`, under which every node refuses every
 * command from the moment the master is marked failed until its replica takes over.
 */
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster } from 'ioredis'
import calculateSlot from 'cluster-key-slot'
import { createHash } from 'node:crypto'
import { startRedisCluster } from '../test/support/redis-cluster.js'
import { CoordinatorProcess } from '../test/support/coordinator-process.js'
import { BenchClient } from './coordinator-load/bench-client.js'

/** the key the registry's first copy lives under (coordinator/src/store/redis-store.js) */
const REGISTRY_KEY = 'mgh:{r}:shards'
const ROUND_MS = 250

/**
 * @typedef {object} ClusterFailoverResult
 * @property {number} assets
 * @property {number} onVictim assets whose holder list lived on the killed master
 * @property {{ lookups: number, found: number }} live lookups of the other assets sent while the master was down
 * @property {{ lookups: number, found: number }} dead lookups of the victim's assets sent while it was down
 * @property {{ lookups: number, found: number }} first5s every lookup sent in the 5 s after the kill
 * @property {number | null} recoveredMs from the kill to the first round in which every asset was found (null: not within the wait)
 * @property {number | null} updatedMs from the kill to the holder's first update accepted after that round (null: none within the wait)
 * @property {Record<string, number>} readyz503Ms per coordinator, how long `/readyz` said 503 (by 250 ms polls)
 * @property {number} unanswered lookups not answered within 5 s
 */

/**
 * @param {{ assets?: number, victim?: 'registry' | 'other', fullCoverage?: boolean, waitMs?: number }} [options]
 * @returns {Promise<ClusterFailoverResult>}
 */
export async function runClusterFailover ({ assets = 30, victim = 'registry', fullCoverage = false, waitMs = 30_000 } = {}) {
  const cluster = await startRedisCluster({ requireFullCoverage: fullCoverage })
  const admin = new Cluster(cluster.nodes)
  /** @type {CoordinatorProcess[]} */
  const coordinators = []
  /** @type {BenchClient[]} */
  const clients = []
  try {
    await new Promise((resolve) => admin.once('ready', resolve))
    for (const name of ['a', 'b']) coordinators.push(await CoordinatorProcess.start({ name, redisUrl: cluster.url }))
    const [a, b] = coordinators
    // Each sees the other before the clients come.
    const bothLive = async () => (await Promise.all(coordinators.map(async (c) => (await c.stats()).shards))).every((n) => n === 2)
    while (!(await bothLive())) await sleep(50)
    const hashes = Array.from({ length: assets }, (_, i) => 'sha256-' + createHash('sha256').update(`failover-${i}`).digest('base64'))
    const holder = await BenchClient.open(a.url)
    clients.push(holder)
    const holderId = await holder.join(hashes)
    const looker = await BenchClient.open(b.url)
    clients.push(looker)
    await looker.join([])

    // The master a key's slot is served by, as host:port.
    const masterOf = (/** @type {string} */ key) => String(admin.slots[calculateSlot(key)][0])
    const registryMaster = masterOf(REGISTRY_KEY)
    const target = victim === 'registry'
      ? registryMaster
      : /** @type {string} */ (admin.nodes('master').map((n) => `${n.options.host}:${n.options.port}`).find((m) => m !== registryMaster))
    const onVictim = hashes.map((hash) => masterOf(`mgh:h:{${hash}}`) === target)
    const server = cluster.servers.find((s) => `127.0.0.1:${s.port}` === target)
    if (server === undefined) throw new Error(`no server for master ${target}`)

    const live = { lookups: 0, found: 0 }
    const dead = { lookups: 0, found: 0 }
    const first5s = { lookups: 0, found: 0 }
    /** @type {Record<string, number>} */
    const readyz503Ms = { a: 0, b: 0 }
    let unanswered = 0
    let recoveredMs = null
    await server.close()
    const killedAt = Date.now()
    while (recoveredMs === null && Date.now() - killedAt < waitMs) {
      const sentAt = Date.now() - killedAt
      const [found, ready] = await Promise.all([
        Promise.all(hashes.map(async (hash) => {
          const timeout = new AbortController()
          const reply = await Promise.race([
            looker.request({ type: 'lookup', hash }, 'holders').then((r) => r.peers.includes(holderId), () => false),
            sleep(5000, null, { signal: timeout.signal }).catch(() => null)
          ])
          timeout.abort()
          if (reply === null) unanswered++
          return reply === true
        })),
        Promise.all(coordinators.map(async (c) => (await fetch(`${c.httpUrl}/readyz`).catch(() => null))?.status ?? 0))
      ])
      ready.forEach((status, i) => { if (status !== 200) readyz503Ms[coordinators[i].name] += ROUND_MS })
      found.forEach((hit, i) => {
        const bucket = onVictim[i] ? dead : live
        bucket.lookups++
        if (hit) bucket.found++
        if (sentAt < 5000) {
          first5s.lookups++
          if (hit) first5s.found++
        }
      })
      if (found.every(Boolean)) recoveredMs = sentAt
      else await sleep(Math.max(0, ROUND_MS - (Date.now() - killedAt - sentAt)))
    }
    // Changes too, once the coordinator's client has learnt every slot's new master (an update may
    // touch slots other than the ones the lookups read): retried until then.
    let updatedMs = null
    for (let n = 0; updatedMs === null && Date.now() - killedAt < waitMs; n++) {
      if (recoveredMs === null) break
      const hash = `sha256-${createHash('sha256').update(`after-${n}`).digest('base64')}`
      updatedMs = await holder.request({ type: 'update', add: [hash] }, 'updated').then(() => Date.now() - killedAt, () => null)
      if (updatedMs === null) await sleep(200)
    }
    return { assets, onVictim: onVictim.filter(Boolean).length, live, dead, first5s, recoveredMs, updatedMs, readyz503Ms, unanswered }
  } finally {
    await Promise.all(clients.map((c) => c.close()))
    await Promise.all(coordinators.map((c) => c.stop('SIGKILL')))
    admin.disconnect()
    await cluster.close()
  }
}

/** @param {{ lookups: number, found: number }} x @returns {string} */
const share = (x) => `${x.found} of ${x.lookups} (${x.lookups === 0 ? '-' : Math.round(x.found / x.lookups * 100)}%)`

async function main () {
  const { values } = parseArgs({
    options: { assets: { type: 'string' }, victim: { type: 'string' }, 'full-coverage': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean' } }
  })
  if (values.help) {
    console.log('usage: node bench/cluster-failover.js [--assets N] [--victim registry|other] [--full-coverage] [--json]   (N from 3 to 1000, default 30)')
    return
  }
  const assets = Number(values.assets ?? 30)
  const victim = values.victim ?? 'registry'
  if (!Number.isInteger(assets) || assets < 3 || assets > 1000 || (victim !== 'registry' && victim !== 'other')) {
    console.error('cluster-failover: --assets must be an integer from 3 to 1000, --victim registry or other')
    process.exit(2)
  }
  const r = await runClusterFailover({ assets, victim, fullCoverage: values['full-coverage'] === true })
  if (values.json) return console.log(JSON.stringify(r))
  console.log({
    assets,
    onKilledMaster: r.onVictim,
    'found (other masters, while down)': share(r.live),
    'found (killed master, while down)': share(r.dead),
    'found (all, first 5 s)': share(r.first5s),
    recoveredMs: r.recoveredMs,
    updatedMs: r.updatedMs,
    readyz503Ms: r.readyz503Ms,
    unanswered: r.unanswered
  })
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
