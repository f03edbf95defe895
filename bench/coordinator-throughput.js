#!/usr/bin/env node
/**
 * Coordinator lookup throughput and latency: one coordinator process on the
 * in-process store, one on Redis, and two shards on one Redis (clients split
 * across them). Each run joins holder peers, then asker peers issue lookups in
 * a closed loop for a fixed time. Bounded in time and count; loopback only.
 *
 *   node bench/coordinator-throughput.js [--seconds 5] [--askers 40] [--depth 8]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { sriHash } from '../client/manifest.js'
import { TestClient } from '../coordinator/test/test-client.js'
import { startRedisServer } from '../test/support/redis-server.js'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    askers: { type: 'string', default: '40' },
    holders: { type: 'string', default: '200' },
    depth: { type: 'string', default: '8' }
  }
})
const SECONDS = Number(values.seconds)
const ASKERS = Number(values.askers)
const HOLDERS = Number(values.holders)
const DEPTH = Number(values.depth)
const POOL = Array.from({ length: 2000 }, (_, i) => sriHash(Buffer.from(`asset${i}`)))
const bin = fileURLToPath(new URL('../coordinator/bin/maygh-coordinator.js', import.meta.url))

/**
 * @param {Record<string, string>} env
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>}
 */
async function startCoordinatorProcess (env) {
  const child = spawn(process.execPath, [bin, '--port', '0', '--stun-port', '0'], {
    // The per-peer rate limit is lifted: each bench client stands for many real peers.
    env: { ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let output = ''
  for await (const chunk of child.stdout) {
    output += chunk
    const url = output.match(/on (ws:\/\/[\d.]+:\d+)/)?.[1]
    if (url) return { url, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit') } }
  }
  throw new Error(`coordinator did not start: ${output}`)
}

/**
 * @param {string[]} urls coordinators; clients are spread across them round-robin
 * @returns {Promise<{ lookups: number, perSecond: number, p50: number, p99: number }>}
 */
async function measure (urls) {
  const holders = []
  for (let i = 0; i < HOLDERS; i++) {
    const c = await TestClient.open(urls[i % urls.length])
    await c.join(Array.from({ length: 50 }, (_, k) => POOL[(i * 37 + k * 11) % POOL.length]))
    holders.push(c)
  }
  const askers = await Promise.all(Array.from({ length: ASKERS }, (_, i) => TestClient.open(urls[i % urls.length])))
  await Promise.all(askers.map((c) => c.join()))
  /** @type {number[]} */
  const latencies = []
  const end = performance.now() + SECONDS * 1000
  let n = 0
  const loop = async (/** @type {TestClient} */ c) => {
    while (performance.now() < end) {
      const t = performance.now()
      const reply = await c.request({ type: 'lookup', hash: POOL[(n++ * 7919) % POOL.length] })
      if (reply.type !== 'holders') throw new Error(`unexpected reply ${JSON.stringify(reply)}`)
      latencies.push(performance.now() - t)
    }
  }
  const started = performance.now()
  await Promise.all(askers.flatMap((c) => Array.from({ length: DEPTH }, () => loop(c))))
  const elapsed = (performance.now() - started) / 1000
  await Promise.all([...holders, ...askers].map((c) => c.close()))
  latencies.sort((a, b) => a - b)
  const q = (/** @type {number} */ p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]
  return { lookups: latencies.length, perSecond: latencies.length / elapsed, p50: q(0.5), p99: q(0.99) }
}

const redis = await startRedisServer()
const rows = []
try {
  for (const [name, envs] of /** @type {[string, Record<string, string>[]][]} */ ([
    ['memory store, 1 process', [{}]],
    ['Redis store, 1 process', [{ REDIS_URL: redis.url }]],
    ['Redis store, 2 shards', [{ REDIS_URL: redis.url }, { REDIS_URL: redis.url }]]
  ])) {
    const coordinators = await Promise.all(envs.map(startCoordinatorProcess))
    try {
      const result = await measure(coordinators.map((c) => c.url))
      rows.push({ name, ...result })
      console.error(`${name}: ${Math.round(result.perSecond)} lookups/s`)
    } finally {
      await Promise.all(coordinators.map((c) => c.stop()))
    }
  }
} finally {
  await redis.close()
}
console.log(`\n${HOLDERS} holders × 50 assets, ${ASKERS} askers × ${DEPTH} lookups in flight, ${SECONDS} s each (load generator shares the machine's 2 cores)\n`)
console.log('| setup | lookups | lookups/s | p50 ms | p99 ms |')
console.log('|---|---|---|---|---|')
for (const r of rows) console.log(`| ${r.name} | ${r.lookups} | ${Math.round(r.perSecond)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`)
const base = rows[1].perSecond
console.log(`\n2 shards vs 1 on Redis: ${(rows[2].perSecond / base).toFixed(2)}×; Redis vs memory: ${(base / rows[0].perSecond).toFixed(2)}×`)
