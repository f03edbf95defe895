/**
 * Reports and quarantine (quarantine.js) over real sockets: only reports about
 * peers a lookup introduced count, once per visitor; at the threshold the
 * reported visitor stops being handed out, its announcements are ignored, and
 * it stays quarantined when it comes back under a new peer id, on this shard
 * or another.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startCoordinator } from '../src/server.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { signJoinToken } from '../src/join-token.js'
import { TestClient } from '../../test/support/test-client.js'
import { h, peerRemoved } from './store-contract.js'

/** @param {string} name @returns {string} a visitor key as a browser keeps one */
const key = (name) => name.padEnd(16, '0')
const SECRET = 'a-secret-of-at-least-32-characters!'
const SHOP = 'https://shop.example'
/** Where the site issues tokens, each visitor it names counts as a reporter of its own. */
const WITH_TOKENS = { tokenSecrets: [SECRET] }

/**
 * A peer joined as the visitor `name` (with a token naming it when the
 * coordinator wants one, and the browser key `key(name)`).
 * @param {string} url
 * @param {string[]} have
 * @param {string} name
 */
async function peer (url, have, name) {
  const client = await TestClient.open(url, { origin: SHOP })
  const welcome = await client.request({ type: 'join', have, visitor: key(name), token: signJoinToken({ origin: SHOP, visitor: name }, SECRET) })
  assert.equal(welcome.type, 'welcome', JSON.stringify(welcome))
  return { client, id: /** @type {string} */ (welcome.id) }
}

test('reports by distinct visitors a lookup introduced quarantine a peer, across reconnections', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 2, ...WITH_TOKENS })
  const clients = []
  try {
    const liar = await peer(coordinator.url, [h('x')], 'liar')
    const honest = await peer(coordinator.url, [h('x')], 'honest')
    const [r1, r2, r3] = await Promise.all(['r1', 'r2', 'r3'].map((name) => peer(coordinator.url, [], name)))
    clients.push(liar, honest, r1, r2, r3)
    const report = (/** @type {{ client: TestClient }} */ who, /** @type {string} */ about, reason = 'miss') => who.client.request({ type: 'report', peer: about, hash: h('x'), reason })

    // Nobody introduced R1 to the liar yet: the report is refused.
    assert.equal((await report(r1, liar.id)).code, 'MGH_ERR_NOT_INTRODUCED')
    const holders = async (/** @type {{ client: TestClient }} */ who, hash = h('x')) => (await who.client.request({ type: 'lookup', hash })).peers.sort()
    assert.deepEqual(await holders(r1), [liar.id, honest.id].sort())
    assert.deepEqual(await report(r1, liar.id), { type: 'reported', peer: liar.id, ref: r1.client.nextRef - 1 })
    assert.equal((await report(r1, liar.id, 'stall')).type, 'reported')
    assert.deepEqual(await holders(r2), [liar.id, honest.id].sort(), 'one visitor, however often it reports, is one report')
    assert.equal((await report(r2, liar.id, 'hash_mismatch')).type, 'reported')
    assert.equal((await report(r2, liar.id, 'lying')).code, 'MGH_ERR_BAD_FIELD')

    // Two distinct visitors: quarantined. Not handed out, its announcements ignored.
    assert.deepEqual(await holders(r3), [honest.id])
    assert.deepEqual(await liar.client.request({ type: 'update', add: [h('y')] }), { type: 'updated', holding: 0, ref: liar.client.nextRef - 1 })
    assert.deepEqual(await holders(r3, h('y')), [])
    assert.equal(coordinator.holdings, 1, 'only the honest peer\'s holding is counted')

    // Back under a new peer id, with the key its browser keeps: still quarantined.
    const gone = peerRemoved(coordinator, liar.id)
    await liar.client.close()
    await gone
    const again = await peer(coordinator.url, [h('x'), h('z')], 'liar')
    clients.push(again)
    assert.deepEqual(await holders(r3), [honest.id])
    assert.deepEqual(await holders(r3, h('z')), [])
    // It may still fetch, and look up, as anyone.
    assert.deepEqual(await holders(again), [honest.id])
    // Its reports do not count.
    await again.client.request({ type: 'report', peer: honest.id, hash: h('x'), reason: 'miss' })
    await report(r3, honest.id)
    assert.deepEqual(await holders(r1), [honest.id], 'one report that counts is below the threshold')

    const metrics = await (await fetch(`${coordinator.httpUrl}/metrics`)).text()
    assert.match(metrics, /maygh_quarantines_total 1\n/)
    assert.match(metrics, /maygh_reports_total\{reason="miss"\} 2\n/)
    assert.match(metrics, /maygh_reports_total\{reason="hash_mismatch"\} 1\n/)
  } finally {
    await Promise.all(clients.map((c) => c.client.close()))
    await coordinator.close()
  }
})

test('a channel that never opened or stalled is no proof of a lie: such reports from any number of visitors quarantine nobody', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 2, ...WITH_TOKENS })
  const clients = []
  try {
    const holder = await peer(coordinator.url, [h('x')], 'holder')
    const askers = await Promise.all(['a1', 'a2', 'a3', 'a4'].map((name) => peer(coordinator.url, [], name)))
    clients.push(holder, ...askers)
    // Visitors behind a NAT that cannot be traversed fail with every peer they try, and say so.
    for (const [i, asker] of askers.entries()) {
      assert.deepEqual((await asker.client.request({ type: 'lookup', hash: h('x') })).peers, [holder.id])
      const reply = await asker.client.request({ type: 'report', peer: holder.id, hash: h('x'), reason: i % 2 ? 'stall' : 'no_channel' })
      assert.equal(reply.type, 'reported')
    }
    const session = /** @type {import('../src/session.js').Session} */ (coordinator.sessions.get(holder.id))
    assert.equal(session.quarantined, false)
    assert.deepEqual((await askers[0].client.request({ type: 'lookup', hash: h('x') })).peers, [holder.id], 'still handed out')
    const metrics = await (await fetch(`${coordinator.httpUrl}/metrics`)).text()
    assert.match(metrics, /maygh_reports_total\{reason="no_channel"\} 2\n/)
    assert.match(metrics, /maygh_reports_total\{reason="stall"\} 2\n/)
    assert.match(metrics, /maygh_quarantines_total 0\n/)
    // Two visitors that got bad bytes from it are enough.
    for (const asker of askers.slice(0, 2)) await asker.client.request({ type: 'report', peer: holder.id, hash: h('x'), reason: 'hash_mismatch' })
    assert.equal(session.quarantined, true)
  } finally {
    await Promise.all(clients.map((c) => c.client.close()))
    await coordinator.close()
  }
})

test('without tokens, reporters count by network: identities made at will on one network count once; the browser key carries the quarantine', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 2 })
  const clients = []
  try {
    const join = async (/** @type {string[]} */ have, /** @type {string | undefined} */ visitor) => {
      const client = await TestClient.open(coordinator.url)
      clients.push(client)
      const welcome = await client.request({ type: 'join', have, ...(visitor && { visitor }) })
      return { client, id: /** @type {string} */ (welcome.id) }
    }
    const liar = await join([h('x')], key('liar'))
    // Ten visitors, keys and peer ids, all on 127.0.0/24: one reporter.
    for (let i = 0; i < 10; i++) {
      const sybil = await join([], i % 2 === 0 ? key(`sybil${i}`) : undefined)
      await sybil.client.request({ type: 'lookup', hash: h('x') })
      assert.equal((await sybil.client.request({ type: 'report', peer: liar.id, hash: h('x'), reason: 'miss' })).type, 'reported')
    }
    const probe = await join([], undefined)
    assert.deepEqual((await probe.client.request({ type: 'lookup', hash: h('x') })).peers, [liar.id], 'not quarantined by one network')
  } finally {
    await Promise.all(clients.map((c) => c.close()))
    await coordinator.close()
  }
  // At a threshold of one, that network's report is enough; the quarantine follows the browser key.
  const strict = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 1 })
  try {
    const liar = await TestClient.open(strict.url)
    const { id } = await liar.request({ type: 'join', have: [h('x')], visitor: key('liar') })
    const reporter = await TestClient.open(strict.url)
    await reporter.join()
    await reporter.request({ type: 'lookup', hash: h('x') })
    await reporter.request({ type: 'report', peer: id, hash: h('x'), reason: 'miss' })
    assert.deepEqual((await reporter.request({ type: 'lookup', hash: h('x') })).peers, [])
    const gone = peerRemoved(strict, id)
    await liar.close()
    await gone
    const back = await TestClient.open(strict.url)
    await back.request({ type: 'join', have: [h('x')], visitor: key('liar') })
    assert.deepEqual((await reporter.request({ type: 'lookup', hash: h('x') })).peers, [])
    await Promise.all([back.close(), reporter.close()])
  } finally {
    await strict.close()
  }
})

test('a peer cannot report one that only signalled it', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 1 })
  try {
    const holder = await peer(coordinator.url, [h('x')], 'holder')
    const asker = await peer(coordinator.url, [h('w')], 'asker')
    assert.deepEqual((await asker.client.request({ type: 'lookup', hash: h('x') })).peers, [holder.id])
    await asker.client.request({ type: 'connect', to: holder.id, signal: { cid: 'c' } })
    assert.equal((await holder.client.next()).from, asker.id)
    assert.equal((await holder.client.request({ type: 'report', peer: asker.id, hash: h('w'), reason: 'stall' })).code, 'MGH_ERR_NOT_INTRODUCED')
    assert.equal((await holder.client.request({ type: 'connect', to: asker.id, signal: { cid: 'c' } })).type, 'relayed', 'it may still answer')
    await Promise.all([holder.client.close(), asker.client.close()])
  } finally {
    await coordinator.close()
  }
})

test('a report crosses to the reported peer\'s shard; the quarantine follows the token\'s visitor to another shard and browser', async () => {
  const store = new MemoryStore()
  const secret = 'a-secret-of-at-least-32-characters!'
  const shop = 'https://shop.example'
  const shards = [
    await startCoordinator({ port: 0, stunPort: 0, shardId: 'one', reportThreshold: 2, tokenSecrets: [secret] }, { store }),
    await startCoordinator({ port: 0, stunPort: 0, shardId: 'two', reportThreshold: 2, tokenSecrets: [secret] }, { store })
  ]
  const clients = []
  try {
    const join = async (/** @type {number} */ shard, /** @type {string} */ visitor, /** @type {string[]} */ have, browserKey = key(visitor)) => {
      const client = await TestClient.open(shards[shard].url, { origin: shop })
      const welcome = await client.request({ type: 'join', have, visitor: browserKey, token: signJoinToken({ origin: shop, visitor }, secret) })
      clients.push(client)
      return { client, id: /** @type {string} */ (welcome.id) }
    }
    const liar = await join(0, 'mallory', [h('x')])
    for (const name of ['r1', 'r2']) {
      const reporter = await join(1, name, [])
      assert.deepEqual((await reporter.client.request({ type: 'lookup', hash: h('x') })).peers, [liar.id])
      assert.equal((await reporter.client.request({ type: 'report', peer: liar.id, hash: h('x'), reason: 'hash_mismatch' })).type, 'reported')
    }
    const probe = await join(1, 'probe', [])
    for (let i = 0; i < 50 && (await probe.client.request({ type: 'lookup', hash: h('x') })).peers.length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.deepEqual((await probe.client.request({ type: 'lookup', hash: h('x') })).peers, [], 'judged on shard one, over the bus')
    assert.equal(shards[0].sessions.get(liar.id)?.quarantined, true)
    // The same visitor (by its token) from another browser (another key), on the other shard.
    const back = await join(1, 'mallory', [h('x')], key('another-browser'))
    assert.equal(shards[1].sessions.get(back.id)?.quarantined, true)
    assert.deepEqual((await probe.client.request({ type: 'lookup', hash: h('x') })).peers, [])
  } finally {
    await Promise.all(clients.map((c) => c.close()))
    await Promise.all(shards.map((s) => s.close()))
  }
})

test('a visitor that stops serving is unlisted in one update and listed again when it serves; what it refuses meanwhile is not held against it, bad bytes are', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, reportThreshold: 1, ...WITH_TOKENS })
  const clients = []
  try {
    const holder = await peer(coordinator.url, [h('x'), h('y')], 'holder')
    const [r1, r2, r3] = await Promise.all(['r1', 'r2', 'r3'].map((name) => peer(coordinator.url, [], name)))
    clients.push(holder, r1, r2, r3)
    const holders = async (/** @type {{ client: TestClient }} */ who, hash = h('x')) => (await who.client.request({ type: 'lookup', hash })).peers
    const report = async (/** @type {{ client: TestClient }} */ who, /** @type {string} */ reason, hash = h('x')) =>
      assert.equal((await who.client.request({ type: 'report', peer: holder.id, hash, reason })).type, 'reported')
    const session = /** @type {import('../src/session.js').Session} */ (coordinator.sessions.get(holder.id))

    assert.deepEqual(await holders(r1), [holder.id])
    assert.equal((await holder.client.request({ type: 'update', serving: 'no' })).code, 'MGH_ERR_BAD_FIELD')
    // Its upload budget is spent: everything it listed goes at once, and what it adds is not listed.
    assert.equal((await holder.client.request({ type: 'update', serving: false })).holding, 0)
    assert.deepEqual(await holders(r2), [])
    assert.deepEqual(await holders(r2, h('y')), [])
    assert.equal((await holder.client.request({ type: 'update', add: [h('z')] })).holding, 0)
    assert.deepEqual(await holders(r2, h('z')), [])
    assert.equal(coordinator.holdings, 0)
    // R1 was handed it before: its miss, or an offer it no longer answers, is no lie.
    await report(r1, 'miss')
    await report(r1, 'no_channel')
    assert.equal(session.quarantined, false)

    // Serving again (a new day's budget, opted in): listed again.
    assert.equal((await holder.client.request({ type: 'update', serving: true, add: [h('x')] })).holding, 1)
    assert.deepEqual(await holders(r2), [holder.id])
    // A miss for an asset it no longer lists (evicted, and said so) does not count either.
    await report(r2, 'miss', h('y'))
    assert.equal(session.quarantined, false)
    // Bad bytes always do.
    assert.deepEqual(await holders(r3), [holder.id])
    await report(r3, 'hash_mismatch')
    assert.equal(session.quarantined, true)
    assert.match(await (await fetch(`${coordinator.httpUrl}/metrics`)).text(), /maygh_withdrawals_total 1\n/)
  } finally {
    await Promise.all(clients.map((c) => c.client.close()))
    await coordinator.close()
  }
})
