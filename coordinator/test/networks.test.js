/**
 * Visitors' networks (networks.js): named without their addresses, and, with
 * `pairWithinNetwork`, the only visitors a visitor is handed to. Clients
 * connect from different loopback addresses (127.0.0.0/8 is all loopback
 * here), which the coordinator sees as different networks.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startCoordinator } from '../src/server.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { Networks, networkOf } from '../src/networks.js'
import { TestClient } from '../../test/support/test-client.js'
import { h, peerRemoved } from './store-contract.js'

test('a network is an address\'s /24 or /48', () => {
  assert.equal(networkOf('203.0.113.77'), '203.0.113')
  assert.equal(networkOf('::ffff:203.0.113.77'), '203.0.113')
  assert.equal(networkOf('2001:db8:abcd:12::1'), '2001:db8:abcd')
  assert.equal(networkOf('2001:db8::1'), '2001:db8:0')
  assert.equal(networkOf('::1'), '0:0:0')
})

test('a network\'s name hides the prefix, is shared by its addresses, and changes with the store\'s salt', async () => {
  let salt = 'one'
  const networks = new Networks({ networkSalt: async () => salt })
  const a = await networks.name('203.0.113.7')
  assert.match(a, /^[\w-]{22}$/)
  assert.ok(!a.includes('203'))
  assert.equal(await networks.name('203.0.113.200'), a)
  assert.notEqual(await networks.name('203.0.114.7'), a)
  salt = 'two'
  networks.salt = null // past the cache's minute
  assert.notEqual(await networks.name('203.0.113.7'), a)
})

/**
 * A client joined from `localAddress` holding `have`.
 * @param {string} url
 * @param {string} localAddress
 * @param {string[]} have
 */
async function joinFrom (url, localAddress, have = []) {
  const client = await TestClient.open(url, { localAddress })
  const welcome = await client.request({ type: 'join', have })
  assert.equal(welcome.type, 'welcome')
  return { client, id: /** @type {string} */ (welcome.id) }
}

test('pairWithinNetwork: a visitor is handed only to visitors of its own network, and leaves no trace when it goes', async () => {
  const store = new MemoryStore()
  const coordinator = await startCoordinator({ port: 0, stunPort: 0, pairWithinNetwork: true }, { store })
  const clients = []
  try {
    const a = await joinFrom(coordinator.url, '127.0.0.1', [h('x')])
    const b = await joinFrom(coordinator.url, '127.0.0.2')
    const c = await joinFrom(coordinator.url, '127.0.1.1', [h('y')])
    const d = await joinFrom(coordinator.url, '127.0.1.9')
    clients.push(a, b, c, d)
    const holders = async (/** @type {{ client: TestClient }} */ who, /** @type {string} */ hash) => (await who.client.request({ type: 'lookup', hash })).peers
    assert.deepEqual(await holders(b, h('x')), [a.id], 'same /24')
    assert.deepEqual(await holders(c, h('x')), [], 'another /24 is never handed A')
    assert.deepEqual(await holders(d, h('y')), [c.id])
    assert.deepEqual(await holders(b, h('y')), [])
    // Updates are scoped the same way, and so is what may be signalled: only peers a lookup named.
    assert.equal((await b.client.request({ type: 'update', add: [h('y')] })).holding, 1)
    assert.deepEqual(await holders(a, h('y')), [b.id])
    assert.deepEqual(await holders(d, h('y')), [c.id])
    assert.equal((await c.client.request({ type: 'connect', to: a.id, signal: { cid: 'c' } })).code, 'MGH_ERR_NOT_INTRODUCED')

    for (const who of [a, b, c]) {
      const gone = peerRemoved(coordinator, who.id)
      await who.client.close()
      await gone
    }
    assert.deepEqual(await holders(d, h('y')), [])
    assert.equal(coordinator.holdings, 0)
  } finally {
    await Promise.all(clients.map((c) => c.client.close()))
    await coordinator.close()
  }
})

test('without pairWithinNetwork, visitors of every network are handed to each other', async () => {
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  const clients = []
  try {
    const a = await joinFrom(coordinator.url, '127.0.0.1', [h('x')])
    const c = await joinFrom(coordinator.url, '127.0.1.1')
    clients.push(a, c)
    assert.deepEqual((await c.client.request({ type: 'lookup', hash: h('x') })).peers, [a.id])
  } finally {
    await Promise.all(clients.map((c) => c.client.close()))
    await coordinator.close()
  }
})
