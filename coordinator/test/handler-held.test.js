/**
 * The `held` handler (protocol 5), called directly on the memory store
 * (handler-context.js): which of some assets any visitor holds, as `GET /held`
 * says, naming and introducing nobody; the misses counted as lookups that
 * missed; one message of the rate limit per asset; a failing store coded.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { h, handlerContext } from './handler-context.js'

const A = h('a')
const B = h('b')

test('held names the assets some visitor holds, introduces nobody, and counts the ones nobody holds as lookups that missed', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  await hc.joined([A, B])
  const worker = hc.open()
  await hc.send(worker, { type: 'join', fetchOnly: true })
  assert.deepEqual(await hc.send(worker, { type: 'held', hashes: [A, h('nobody'), B, A] }), { type: 'held', held: [A, B] })
  assert.equal(worker.introductions, null, 'nobody introduced')
  assert.equal(hc.context.counters.lookups, 1, 'the miss, once')
  assert.equal(await hc.metric('maygh_lookups_total{result="miss"}'), 1)
  assert.equal(await hc.metric('maygh_lookups_total{result="hit"}'), 0, 'a held one is counted by its page\'s lookup')
  assert.equal(await hc.metric('maygh_held_checks_total'), 1)
})

test('held costs one message of the rate per asset, is refused before join, and answers MGH_ERR_STORE when the store fails', async (t) => {
  const hc = await handlerContext({ rateLimitPerSecond: 10, rateLimitBurst: 4 })
  t.after(() => hc.close())
  await assert.rejects(hc.send(hc.open(), { type: 'held', hashes: [A] }), { code: 'MGH_ERR_NOT_JOINED' })
  const asker = await hc.joined()
  assert.deepEqual(await hc.send(asker, { type: 'held', hashes: [A, B, h('c')] }), { type: 'held', held: [] })
  // The frame's own token is the coordinator's to take (server.js); the handler took two more of the burst of 4.
  await assert.rejects(hc.send(asker, { type: 'held', hashes: [A, B, h('c'), h('d')] }), { code: 'MGH_ERR_RATE_LIMITED', message: /a held check of 4 assets is over the rate/ })
  hc.store.sampleHolders = () => { throw new Error('store down') }
  await assert.rejects(hc.send(await hc.joined(), { type: 'held', hashes: [A] }), { code: 'MGH_ERR_STORE' })
  hc.store.sampleHolders = async () => { throw new Error('store down') }
  await assert.rejects(hc.send(await hc.joined(), { type: 'held', hashes: [A] }), { code: 'MGH_ERR_STORE' })
})
