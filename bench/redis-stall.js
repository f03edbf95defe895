#!/usr/bin/env node
/**
 * Every reply in time while Redis stalls (issue 24): one coordinator on a
 * Redis it starts, one client looking up every 100 ms and one updating every
 * second; Redis is stopped (SIGSTOP) for --stall-s seconds. Prints each
 * kind's reply times during the stall (p50, max, how many took longer than
 * storeTimeoutMs + 250 ms) and when `/readyz` first said 503.
 *
 *   node bench/redis-stall.js [--store-timeout-ms 1000] [--stall-s 6] [--json]
 */
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { startCoordinator } from '../coordinator/src/server.js'
import { startRedisServer } from '../test/support/redis-server.js'
import { TestClient } from '../test/support/test-client.js'
import { sriHash } from '../client/manifest.js'
import { upperPercentile } from './stats.js'

/** an asset's name, made from a word */
const h = (/** @type {string} */ word) => sriHash(Buffer.from(word))

const { values } = parseArgs({ options: { 'store-timeout-ms': { type: 'string' }, 'stall-s': { type: 'string' }, json: { type: 'boolean' } } })
const timeoutMs = Number(values['store-timeout-ms'] ?? 1000)
const stallS = Number(values['stall-s'] ?? 6)
if (!(timeoutMs >= 10 && timeoutMs <= 60000) || !(stallS > 0 && stallS <= 600)) {
  console.error('redis-stall: --store-timeout-ms from 10 to 60000, --stall-s from 0 to 600')
  process.exit(2)
}

const redis = await startRedisServer()
const coordinator = await startCoordinator({ port: 0, stunPort: 0, redisUrl: redis.url, storeTimeoutMs: timeoutMs })
coordinator.on('warning', () => {})
const holder = await TestClient.open(coordinator.url)
await holder.join([h('x')])
const looker = await TestClient.open(coordinator.url)
await looker.join()
const updater = await TestClient.open(coordinator.url)
await updater.join()

/** @type {Record<'lookup' | 'update', number[]>} reply times of the requests sent during the stall */
const times = { lookup: [], update: [] }
let stalled = false
/** the loops run while this is */
const state = { running: true }
let n = 0
/**
 * @param {TestClient} client
 * @param {'lookup' | 'update'} kind
 * @param {number} everyMs
 * @param {() => object} message
 */
async function loop (client, kind, everyMs, message) {
  while (state.running) {
    const t0 = Date.now()
    const counted = stalled
    client.request(message()).then(() => { if (counted) times[kind].push(Date.now() - t0) })
    await sleep(everyMs)
  }
}
const loops = [
  loop(looker, 'lookup', 100, () => ({ type: 'lookup', hash: h('x') })),
  loop(updater, 'update', 1000, () => ({ type: 'update', add: [h(`u${n++}`)] }))
]
await sleep(1000)
redis.process.kill('SIGSTOP')
stalled = true
const stoppedAt = Date.now()
let readyz503 = null
while (Date.now() - stoppedAt < stallS * 1000) {
  if (readyz503 === null && (await fetch(`${coordinator.httpUrl}/readyz`)).status === 503) readyz503 = Date.now() - stoppedAt
  await sleep(50)
}
stalled = false
redis.process.kill('SIGCONT')
// Replies to what was sent during the stall, however late.
await sleep(Math.max(3000, 3 * timeoutMs))
state.running = false
await Promise.all(loops)

/** @param {number[]} list */
const figures = (list) => {
  const sorted = [...list].sort((a, b) => a - b)
  // the upper median (bench/stats.js): the README's figures were printed with it
  return { replies: sorted.length, p50Ms: sorted.length ? upperPercentile(sorted, 0.5) : null, maxMs: sorted[sorted.length - 1] ?? null, overTimeout: sorted.filter((ms) => ms > timeoutMs + 250).length }
}
const report = { storeTimeoutMs: timeoutMs, stallS, lookup: figures(times.lookup), update: figures(times.update), readyz503AfterMs: readyz503 }
console.log(values.json ? JSON.stringify(report) : report)
await Promise.all([holder.close(), looker.close(), updater.close()])
await coordinator.close()
await redis.close()
