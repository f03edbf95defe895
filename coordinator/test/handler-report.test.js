/**
 * The `report` handler, called directly on the memory store (handler-context.js),
 * with the real Quarantine: reports count only about a peer a lookup of the
 * reporter's named, once per reporting network, and at reportThreshold the
 * reported visitor is quarantined and its holdings leave the store.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OTHER_SHARD, h, handlerContext, peerOn } from './handler-context.js'

const A = h('a')

/**
 * A peer that looked `holder` up, from a network of its own.
 * @param {import('./handler-context.js').Harness} hc
 * @param {string} ip
 */
async function reporter (hc, ip) {
  const session = await hc.joined([], { ip })
  await hc.send(session, { type: 'lookup', hash: A })
  return session
}

test('at reportThreshold reporting networks the reported peer is quarantined and unlisted', async (t) => {
  const hc = await handlerContext({ reportThreshold: 3 })
  t.after(() => hc.close())
  const liar = await hc.joined([A, h('b')])
  const reporters = [await reporter(hc, '192.0.2.1'), await reporter(hc, '192.0.2.2'), await reporter(hc, '198.51.100.1'), await reporter(hc, '203.0.113.1')]
  const bad = { type: 'report', peer: liar.peerId, hash: A, reason: 'hash_mismatch' }
  assert.deepEqual(await hc.send(reporters[0], { ...bad, ref: 9 }), { type: 'reported', peer: liar.peerId })
  // The second is from the first's network (/24): the same reporter.
  assert.equal(await hc.send(reporters[1], bad), undefined, 'no ref, no reply')
  await hc.send(reporters[2], bad)
  assert.equal(liar.quarantined, false, 'two networks so far')
  await hc.send(reporters[3], bad)
  assert.equal(liar.quarantined, true)
  assert.deepEqual((await hc.store.getPeer(liar.peerId))?.assets, [])
  assert.equal(liar.assets.size, 0)
  assert.equal(await hc.store.isQuarantined(liar.subject), true)
  assert.equal(await hc.metric('maygh_quarantines_total'), 1)
  assert.equal(await hc.metric('maygh_reports_total{reason="hash_mismatch"}'), 4)
  // No lookup names it now.
  assert.deepEqual((await hc.send(reporters[0], { type: 'lookup', hash: A })).peers, [])
})

test('a report about a peer no lookup of the reporter\'s named is refused', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const holder = await hc.joined([A])
  const stranger = await hc.joined()
  const report = { type: 'report', peer: holder.peerId, hash: A, reason: 'miss' }
  await assert.rejects(hc.send(stranger, report), { code: 'MGH_ERR_NOT_INTRODUCED', message: new RegExp(`${holder.peerId} was not handed to this peer by a lookup`) })
  // Signalling it first does not let it report either: only a lookup does.
  holder.introduced().add(stranger.peerId, holder.now(), false)
  await assert.rejects(hc.send(holder, { ...report, peer: stranger.peerId }), { code: 'MGH_ERR_NOT_INTRODUCED' })
  await assert.rejects(hc.send(hc.open(), report), { code: 'MGH_ERR_NOT_JOINED' })
  assert.equal(await hc.metric('maygh_reports_total{reason="miss"}'), 0)
})

test('reports that do not blame the peer, or come from a quarantined reporter, never quarantine it', async (t) => {
  const hc = await handlerContext({ reportThreshold: 1 })
  t.after(() => hc.close())
  const holder = await hc.joined([A])
  const first = await reporter(hc, '192.0.2.1')
  for (const reason of ['no_channel', 'stall']) await hc.send(first, { type: 'report', peer: holder.peerId, hash: A, reason })
  // `miss` for an asset it does not list: it is not lying by refusing.
  await hc.send(first, { type: 'report', peer: holder.peerId, hash: h('other'), reason: 'miss' })
  const quarantined = await reporter(hc, '198.51.100.1')
  quarantined.quarantined = true
  assert.deepEqual(await hc.send(quarantined, { type: 'report', peer: holder.peerId, hash: A, reason: 'hash_mismatch', ref: 1 }), { type: 'reported', peer: holder.peerId })
  assert.equal(holder.quarantined, false)
  assert.equal(await hc.metric('maygh_reports_total{reason="stall"}'), 1, 'counted in the metrics all the same')
  assert.equal(await hc.metric('maygh_reports_total{reason="hash_mismatch"}'), 0, 'a quarantined reporter\'s is not counted at all')
  // A blaming report from a reporter in good standing: at the threshold of 1, quarantined.
  await hc.send(first, { type: 'report', peer: holder.peerId, hash: A, reason: 'miss' })
  assert.equal(holder.quarantined, true)
})

test('a report about a peer on another shard is sent to that shard to judge', async (t) => {
  const hc = await handlerContext()
  t.after(() => hc.close())
  const away = peerOn(OTHER_SHARD, 'away')
  await hc.store.addPeer(away, [A])
  /** @type {unknown[]} */
  const bus = []
  await hc.store.subscribe(OTHER_SHARD, (message) => bus.push(message))
  const session = await reporter(hc, '192.0.2.1')
  await hc.send(session, { type: 'report', peer: away, hash: A, reason: 'hash_mismatch' })
  await new Promise((resolve) => queueMicrotask(() => resolve(undefined)))
  assert.deepEqual(bus, [{ report: away, by: await hc.context.networks.name('192.0.2.1'), reason: 'hash_mismatch', hash: A }])
})
