import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { startCoordinator } from '../src/server.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { startRedisServer } from '../../test/support/redis-server.js'
import { TestClient } from '../../test/support/test-client.js'
import { h, peerRemoved } from './store-contract.js'

/**
 * Two shards, one store: peers on different coordinators find and signal each
 * other exactly as peers on one coordinator do.
 *
 * @param {string} name
 * @param {() => Promise<{ options: object, deps: object, cleanup: () => Promise<void> }>} setup
 */
function shardedSuite (name, setup) {
  describe(`two coordinator shards on ${name}`, () => {
    /** @type {import('../src/server.js').Coordinator[]} */
    let shards = []
    /** @type {() => Promise<void>} */
    let cleanup
    before(async () => {
      const env = await setup()
      cleanup = env.cleanup
      shards = [
        await startCoordinator({ port: 0, stunPort: 0, shardId: 'one', ...env.options }, env.deps),
        await startCoordinator({ port: 0, stunPort: 0, shardId: 'two', ...env.options }, env.deps)
      ]
    })
    after(async () => {
      await Promise.all(shards.map((s) => s.close()))
      await cleanup()
    })

    test('lookup on one shard finds holders on the other, and connect crosses shards', async () => {
      const a = await TestClient.open(shards[0].url)
      const b = await TestClient.open(shards[1].url)
      const { id: idA } = await a.join([h('shared')])
      const { id: idB } = await b.join()
      assert.deepEqual((await b.request({ type: 'lookup', hash: h('shared') })).peers, [idA])
      b.sendRaw(JSON.stringify({ type: 'connect', to: idA, signal: { cid: 'x', sdp: { type: 'offer', sdp: 'o' } } }))
      assert.deepEqual(await a.next(), { type: 'connect', from: idB, signal: { cid: 'x', sdp: { type: 'offer', sdp: 'o' } }, introduced: true })
      const relayed = await a.request({ type: 'connect', to: idB, signal: { cid: 'x', sdp: { type: 'answer', sdp: 'a' } } })
      assert.equal(relayed.type, 'relayed', 'a cross-shard relay with a ref is acknowledged')
      assert.deepEqual(await b.next(), { type: 'connect', from: idA, signal: { cid: 'x', sdp: { type: 'answer', sdp: 'a' } }, introduced: true })
      assert.equal(shards[1].counters.forwarded, 1)
      assert.equal(shards[0].counters.forwarded, 1)

      const removed = peerRemoved(shards[0], idA)
      await a.close()
      await removed
      assert.deepEqual((await b.request({ type: 'lookup', hash: h('shared') })).peers, [])
      assert.equal((await b.request({ type: 'connect', to: idA, signal: {} })).code, 'MGH_ERR_UNKNOWN_PEER')
      // Each shard counts its own peers now and the others' as of their last beat.
      await shards[0].presence?.tick()
      const stats = await (await fetch(`${shards[1].httpUrl}/stats`)).json()
      assert.deepEqual([stats.peers, stats.shards], [1, 2], 'store-wide counts')
      await b.close()
    })

    test('welcome names the other shard; a draining shard moves its clients there and refuses joins', async () => {
      await Promise.all(shards.map((s) => s.presence?.tick()))
      const [one, two] = shards
      const a = await TestClient.open(one.url)
      assert.deepEqual((await a.join()).alternates, [two.url])
      const drained = one.drain(200)
      assert.deepEqual(await a.next(), { type: 'move', alternates: [two.url] })
      const ready = await fetch(`${one.httpUrl}/readyz`)
      assert.equal(ready.status, 503)
      assert.equal((await ready.json()).draining, true)
      const late = await TestClient.open(one.url)
      const closed = new Promise((resolve) => late.ws.once('close', (code, reason) => resolve([code, String(reason)])))
      const refusal = await late.join()
      assert.deepEqual([refusal.code, refusal.alternates], ['MGH_ERR_DRAINING', [two.url]])
      assert.deepEqual(await closed, [1012, 'coordinator is draining; join one of the alternates'])
      // The other shard no longer hands the draining one out.
      await one.presence?.tick()
      await two.presence?.tick()
      const b = await TestClient.open(two.url)
      assert.deepEqual((await b.join()).alternates, [])
      await a.close()
      await drained
      assert.equal(one.connections.size, 0)
      await b.close()
    })
  })
}

shardedSuite('one shared in-process store', async () => {
  const store = new MemoryStore()
  return { options: {}, deps: { store }, cleanup: () => store.close() }
})

shardedSuite('Redis', async () => {
  const server = await startRedisServer()
  return {
    options: { redisUrl: server.url },
    deps: {},
    cleanup: async () => {
      const admin = new Redis(server.url)
      // Both shards removed their peers and left the registry on close: only the sentinel is left.
      assert.deepEqual(await admin.keys('mgh:*'), ['mgh:e:{0}'])
      await admin.quit()
      await server.close()
    }
  }
})
