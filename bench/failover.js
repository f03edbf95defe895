#!/usr/bin/env node
/**
 * How long a dead shard's clients take to join a live coordinator when they
 * know stale URLs too (issue 24). Three coordinator processes on one Redis:
 * A, B and D. N clients, running the page's own coordinator connection
 * (client/src/signaling.js) over `ws`, are configured with B and two URLs
 * where nothing listens (coordinators long gone), and all join B; B's
 * `welcome` names A and D. Then D is SIGKILLed (its registry entry lives on
 * for shardTtlMs, as a shard that died a moment earlier does) and right after
 * it B. Each client's time from B's kill to its next `welcome` is what this
 * prints, with where it joined; every one should be back within 5 s.
 *
 *   node bench/failover.js [--clients N] [--json]
 */
import { parseArgs } from 'node:util'
import WebSocket from 'ws'
import { Signaling } from '../client/src/signaling.js'
import { CoordinatorProcess } from '../test/support/coordinator-process.js'
import { freePort, startRedisServer } from '../test/support/redis-server.js'
import { upperPercentile } from './stats.js'

/**
 * @typedef {object} FailoverResult
 * @property {number} clients
 * @property {number[]} rejoinMs each client's time from B's kill to its next welcome (Infinity: none within the wait)
 * @property {Record<string, number>} joinedAt clients by the coordinator they joined: `A`, `D` (dead), `stale`
 * @property {number} attempts sockets the clients opened after the kill, in all
 */

/**
 * @param {{ clients: number, waitMs?: number }} options `waitMs`: how long to wait for the last client (default 60 s)
 * @returns {Promise<FailoverResult>}
 */
export async function runFailover ({ clients, waitMs = 60_000 }) {
  const redis = await startRedisServer()
  /** @type {CoordinatorProcess[]} */
  const started = []
  /** @type {Signaling[]} */
  const sessions = []
  try {
    const [a, b, d] = await Promise.all(['a', 'b', 'd'].map(async (name) => {
      const c = await CoordinatorProcess.start({ name, redisUrl: redis.url })
      started.push(c)
      return c
    }))
    // Every welcome names the other two once each has seen the others' beats.
    const live = async () => (await Promise.all([a, b, d].map(async (c) => (await c.stats()).shards))).every((n) => n === 3)
    while (!(await live())) await new Promise((resolve) => setTimeout(resolve, 50))
    const stale = [`ws://127.0.0.1:${await freePort()}`, `ws://127.0.0.1:${await freePort()}`]
    const names = new Map([[a.url, 'A'], [b.url, 'B'], [d.url, 'D'], ...stale.map((u) => /** @type {[string, string]} */ ([u, 'stale']))])
    /** @type {number[]} */
    const rejoinMs = Array(clients).fill(Infinity)
    /** @type {Record<string, number>} */
    const joinedAt = {}
    let killedAt = Infinity
    let attempts = 0
    let joinedB = 0
    /** @type {() => void} */
    let allOnB = () => {}
    const onB = new Promise((resolve) => { allOnB = () => resolve(undefined) })
    /** @type {() => void} */
    let allBack = () => {}
    const back = new Promise((resolve) => { allBack = () => resolve(undefined) })
    let rejoined = 0
    // Counts every socket opened after the kill, for the figures.
    class CountedWebSocket extends WebSocket {
      /** @param {string} url */
      constructor (url) {
        super(url)
        if (Date.now() >= killedAt) attempts++
        this.on('error', () => {})
      }
    }
    for (let i = 0; i < clients; i++) {
      const s = new Signaling({ urls: [b.url, ...stale], backoffBaseMs: 500, backoffMaxMs: 30000, getHave: () => [], WebSocket: /** @type {any} */ (CountedWebSocket) })
      sessions.push(s)
      s.on('welcome', (/** @type {{ url: string }} */ w) => {
        if (Date.now() < killedAt) {
          if (++joinedB === clients) allOnB()
          return
        }
        if (rejoinMs[i] !== Infinity) return
        rejoinMs[i] = Date.now() - killedAt
        const where = names.get(w.url) ?? w.url
        joinedAt[where] = (joinedAt[where] ?? 0) + 1
        if (++rejoined === clients) allBack()
      })
      s.start(b.url)
    }
    await onB
    await d.stop('SIGKILL')
    killedAt = Date.now()
    await b.stop('SIGKILL')
    await Promise.race([back, new Promise((resolve) => setTimeout(resolve, waitMs))])
    return { clients, rejoinMs, joinedAt, attempts }
  } finally {
    for (const s of sessions) s.stop()
    await Promise.all(started.map((c) => c.stop('SIGKILL')))
    await redis.close()
  }
}

/** @param {number} ms @returns {number | null} */
const finite = (ms) => Number.isFinite(ms) ? ms : null

async function main () {
  const { values } = parseArgs({ options: { clients: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } } })
  if (values.help) {
    console.log('usage: node bench/failover.js [--clients N] [--json]   (N from 1 to 2000, default 200)')
    return
  }
  const clients = Number(values.clients ?? 200)
  if (!Number.isInteger(clients) || clients < 1 || clients > 2000) {
    console.error(`failover: --clients must be an integer from 1 to 2000, got ${values.clients}`)
    process.exit(2)
  }
  const r = await runFailover({ clients })
  const sorted = [...r.rejoinMs].sort((x, y) => x - y)
  const figures = {
    clients,
    // the upper median and p95 (bench/stats.js): the README's figures were printed with them
    p50Ms: upperPercentile(sorted, 0.5),
    // null: not every client was back within the wait (60 s)
    p95Ms: finite(upperPercentile(sorted, 0.95)),
    maxMs: finite(sorted[sorted.length - 1]),
    within5s: sorted.filter((ms) => ms <= 5000).length,
    notBack: sorted.filter((ms) => ms === Infinity).length,
    joinedAt: r.joinedAt,
    attemptsPerClient: Math.round(r.attempts / clients * 100) / 100
  }
  console.log(values.json ? JSON.stringify(figures) : figures)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
