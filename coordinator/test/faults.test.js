/**
 * The coordinator tier under faults, on real Redis servers it starts and
 * stops: Redis stalled, Redis gone, Redis back but empty, and a coordinator
 * process killed. Timings are asserted only where they are the behaviour,
 * with generous bounds.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { startCoordinator } from '../src/server.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { TestClient } from '../../test/support/test-client.js'
import { h } from './store-contract.js'
import { shardOfPeer } from '../../protocol/index.js'

/** Fast beats and a short store timeout, so each fault shows within a second or two. */
const FAST = { port: 0, stunPort: 0, shardHeartbeatMs: 100, shardTtlMs: 1000, storeTimeoutMs: 300 }

/**
 * Poll `check` until it returns true, failing after `ms`.
 * @param {() => Promise<boolean>} check
 * @param {number} ms
 * @param {string} what
 */
async function within (check, ms, what) {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** @param {import('../src/server.js').Coordinator} c */
const readyz = async (c) => (await fetch(`${c.httpUrl}/readyz`)).status
/** @param {import('../src/server.js').Coordinator} c */
const healthz = async (c) => (await fetch(`${c.httpUrl}/healthz`)).status

describe('Redis stalled, gone, and back empty', () => {
  /** @type {Awaited<ReturnType<typeof startRedisServer>>} */
  let redis
  /** @type {import('../src/server.js').Coordinator} */
  let coordinator
  /** @type {TestClient} */
  let holder
  /** @type {TestClient} */
  let asker
  let holderId = ''
  before(async () => {
    redis = await startRedisServer()
    coordinator = await startCoordinator({ ...FAST, redisUrl: redis.url })
    coordinator.on('warning', () => {})
    holder = await TestClient.open(coordinator.url)
    asker = await TestClient.open(coordinator.url)
    holderId = (await holder.join([h('x')])).id
    await asker.join()
  })
  after(async () => {
    await Promise.all([holder.close(), asker.close()])
    await coordinator.close()
    await redis.close()
  })

  test('stalled (SIGSTOP): every request answered within storeTimeoutMs (lookups with no holders, writes MGH_ERR_STORE), updates holding up nothing, /readyz 503 at once, /healthz 200; all well again after', async () => {
    assert.deepEqual((await asker.request({ type: 'lookup', hash: h('x') })).peers, [holderId])
    const bound = FAST.storeTimeoutMs + 250
    /** @type {{ type: string, ms: number, reply: any }[]} */
    const replies = []
    /** @param {TestClient} client @param {object} message */
    const timed = async (client, message) => {
      const t0 = Date.now()
      const reply = await client.request(message)
      replies.push({ type: /** @type {any} */ (message).type, ms: Date.now() - t0, reply })
    }
    redis.process.kill('SIGSTOP')
    const stoppedAt = Date.now()
    /** @type {Promise<void>[]} */
    const sent = []
    let readyAfter = -1
    try {
      // For 2 s: a lookup every 100 ms from one client, an update every 300 ms from another (each
      // update waits behind the last, in order: the lookups of its own client behind it too).
      for (let i = 0; i < 20; i++) {
        sent.push(timed(asker, { type: 'lookup', hash: h('x') }))
        if (i % 3 === 0) {
          sent.push(timed(holder, { type: 'update', add: [h(`y${i}`)] }))
          sent.push(timed(holder, { type: 'lookup', hash: h('x') }))
        }
        if (readyAfter < 0 && await readyz(coordinator) === 503) readyAfter = Date.now() - stoppedAt
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      await Promise.all(sent)
      assert.equal(await healthz(coordinator), 200)
    } finally {
      redis.process.kill('SIGCONT')
    }
    const slowest = Math.max(...replies.map((r) => r.ms))
    assert.ok(slowest <= bound, `every reply within ${bound} ms: the slowest took ${slowest} (${JSON.stringify(replies.filter((r) => r.ms > bound).map((r) => [r.type, r.ms]))})`)
    for (const r of replies) {
      if (r.type === 'lookup') assert.deepEqual(r.reply.peers, r.reply.peers.length ? [holderId] : [], 'a lookup is answered, with no holders or the holder')
      else assert.equal(r.reply.code ?? 'ok', r.reply.type === 'updated' ? 'ok' : 'MGH_ERR_STORE')
    }
    assert.ok(replies.some((r) => r.type === 'update' && r.reply.code === 'MGH_ERR_STORE'), 'writes failed')
    assert.ok(readyAfter >= 0 && readyAfter <= 1000 + FAST.storeTimeoutMs, `/readyz 503 after ${readyAfter} ms`)
    await within(async () => await readyz(coordinator) === 200, 2000, '/readyz 200 again')
    assert.deepEqual((await asker.request({ type: 'lookup', hash: h('x') })).peers, [holderId])
  })

  test('gone, then back empty: the maps are whole again without any client doing anything', async () => {
    const port = redis.port
    await redis.close()
    assert.deepEqual((await asker.request({ type: 'lookup', hash: h('x') })).peers, [])
    assert.equal((await asker.request({ type: 'update', add: [h('z')] })).code, 'MGH_ERR_STORE')
    await within(async () => await readyz(coordinator) === 503, 5000, '/readyz 503')
    redis = await startRedisServer({ port })
    const admin = new Redis(redis.url)
    try {
      // Restarted empty: it loaded nothing (what is there now, the coordinator's beats may have written already).
      assert.match(await admin.info('persistence'), /^rdb_last_load_keys_loaded:0\r?$/m, 'restarted empty')
      await within(async () => await readyz(coordinator) === 200, 10_000, '/readyz 200')
      // The holder never re-announced; the coordinator listed it again.
      await within(async () => (await asker.request({ type: 'lookup', hash: h('x') })).peers[0] === holderId, 5000, 'holder found again')
    } finally {
      await admin.quit()
    }
  })
})

describe('a coordinator killed (SIGKILL)', () => {
  test('its peers stop being handed out within 5 s, its counts leave /stats, and a shard reaps it', async () => {
    const redis = await startRedisServer()
    const survivor = await startCoordinator({ port: 0, stunPort: 0, redisUrl: redis.url })
    const bin = fileURLToPath(new URL('../bin/maygh-coordinator.js', import.meta.url))
    const child = spawn(process.execPath, [bin, '--port', '0', '--stun-port=-1', '--ice-servers', 'stun:127.0.0.1:9'], {
      env: { ...process.env, REDIS_URL: redis.url, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    try {
      let out = ''
      child.stdout.on('data', (d) => { out += d })
      await within(async () => /ws:\/\/[\d.:]+/.test(out), 10_000, 'child coordinator up')
      const url = /** @type {RegExpMatchArray} */ (out.match(/ws:\/\/[\d.:]+/))[0]
      const victim = await TestClient.open(url)
      const { id } = await victim.join([h('k')])
      const asker = await TestClient.open(survivor.url)
      await asker.join()
      await within(async () => (await asker.request({ type: 'lookup', hash: h('k') })).peers[0] === id, 5000, 'found across shards')
      // The victim's count arrives with its next beat.
      await within(async () => { await survivor.presence?.tick(); return survivor.stats().peers === 2 }, 5000, 'both shards counted')

      victim.ws.on('error', () => {})
      const killedAt = Date.now()
      child.kill('SIGKILL')
      await once(child, 'exit')
      // Redis drops the dead process's subscription at once: an offer to its peer is refused
      // now, while the registry still lists the shard (its entry lives another 3 s).
      const victimShard = shardOfPeer(id)
      await within(async () => (await asker.request({ type: 'connect', to: id, signal: {} })).code === 'MGH_ERR_UNKNOWN_PEER', 2000, 'offer to the dead shard refused')
      assert.ok(survivor.store.isLive(victimShard), 'refused before its entry expired')
      await within(async () => (await asker.request({ type: 'lookup', hash: h('k') })).peers.length === 0, 5000, 'dead shard\'s peer gone')
      const goneAfter = Date.now() - killedAt
      await within(async () => survivor.stats().peers === 1, 5000, 'counts without the dead shard')
      const admin = new Redis(redis.url)
      await within(async () => await admin.hlen(`mgh:h:{${h('k')}}`) === 0, 5000, 'reaped')
      await admin.quit()
      assert.ok(goneAfter <= 5000, `gone after ${goneAfter} ms`)
      await asker.close()
    } finally {
      child.kill('SIGKILL')
      await survivor.close()
      await redis.close()
    }
  })
})
