/**
 * A PeerFetch whose one holder, `holder`, is always connected over the
 * given Transfer (the page's end of a channel pair), and whose coordinator
 * answers each lookup with `request`: what the tests of the page's peer path
 * build around a real Transfer pair.
 */
import { PeerFetch } from '../src/peer-fetch.js'
import { Stats } from '../src/stats.js'

/**
 * @param {import('../src/transfer.js').Transfer} page
 * @param {(m: { hashes: string[] }) => Promise<object>} request the coordinator's answer to a lookup
 * @param {{ relay?: object, pool?: object }} [o] the worker's route (transparent mode), and pool methods to replace
 * @returns {PeerFetch}
 */
export function oneHolder (page, request, o = {}) {
  return new PeerFetch({
    relay: /** @type {any} */ (o.relay),
    stats: new Stats(),
    signaling: /** @type {any} */ ({ id: 'me', joined: true, send: () => true, request }),
    pool: /** @type {any} */ ({
      connected: () => ['holder'],
      reaching: () => true,
      reachingSince: () => undefined,
      openPace: null,
      prepare: async () => [],
      bind: () => {},
      routeOf: () => ({ send: () => true }),
      drop: () => {},
      transfer: async () => page,
      ...o.pool
    }),
    ready: Promise.resolve(true),
    config: { lookupTimeoutMs: 1000, connectTimeoutMs: 5000, quotaMb: 50 }
  })
}
