/**
 * Handlers called directly, without sockets or a coordinator: a
 * HandlerContext made of the real memory store (this shard beating in it, so
 * its peers are live) and the real Metrics, Relay, Quarantine, Ice, Networks,
 * ClientLimits, UsageTally and Orphans, all cheap to make. Faked are only each
 * session's socket (it keeps what it is sent), the coordinator's own fields
 * (draining, alternates, holdings) and the quarantine's unlisting (server.js
 * #unlist, which queues it in the peer's order: here it runs at once). The
 * sessions' clock is the test's own (`advance`).
 */
import { createHash } from 'node:crypto'
import { resolveConfig } from '../src/config.js'
import { MemoryStore } from '../src/store/memory-store.js'
import { Metrics } from '../src/metrics.js'
import { Networks } from '../src/networks.js'
import { Orphans } from '../src/orphans.js'
import { Quarantine } from '../src/quarantine.js'
import { Relay } from '../src/relay.js'
import { Ice } from '../src/ice.js'
import { ClientLimits } from '../src/client-limits.js'
import { UsageTally } from '../src/usage.js'
import { Session } from '../src/session.js'
import { HANDLERS } from '../src/handlers/index.js'
import { validateMessage } from '../src/message-parser.js'

/** this coordinator's shard */
export const SHARD = 'here'
/** a shard live in the store, whose peers are on no socket here */
export const OTHER_SHARD = 'there'

/** @param {string} name @returns {string} an asset name (SRI sha256) */
export const h = (name) => 'sha256-' + createHash('sha256').update(name).digest('base64')

/** @param {string} shard @param {string} name @returns {string} a well-formed peer id on `shard` */
export const peerOn = (shard, name) => `${shard}~${name.padEnd(22, '0').slice(0, 22)}`

/** Stands in for a session's WebSocket: open, and keeps what it is sent, decoded. */
export class FakeSocket {
  OPEN = 1
  CLOSED = 3
  readyState = 1
  bufferedAmount = 0
  /** @type {any[]} */
  sent = []

  /** @param {string} text */
  send (text) {
    this.sent.push(JSON.parse(text))
  }
}

/**
 * @typedef {Awaited<ReturnType<typeof handlerContext>>} Harness
 */

/**
 * @param {Partial<typeof import('../src/config.js').DEFAULTS>} [options] config over the defaults
 */
export async function handlerContext (options = {}) {
  const config = resolveConfig({ stunPort: -1, iceServers: [], ...options })
  const store = new MemoryStore()
  await store.beat(SHARD, { url: 'ws://here', peers: 0, holdings: 0 }, 3_600_000)
  await store.beat(OTHER_SHARD, { url: 'ws://there', peers: 0, holdings: 0 }, 3_600_000)
  let time = 1000
  const now = () => time
  /** @type {Map<string, Session>} */
  const sessions = new Map()
  const counters = { connections: 0, messages: 0, lookups: 0, lookupHits: 0, updates: 0, relayed: 0, forwarded: 0, errors: 0, dropped: 0, busRejected: 0 }
  /** @type {{ err: Error, context: string }[]} */
  const warnings = []
  const warn = (/** @type {Error} */ err, /** @type {string} */ context) => { warnings.push({ err, context }) }
  const metrics = new Metrics({ shard: SHARD, gauges: { connections: () => 0, peers: () => sessions.size, fetchOnlyPeers: () => 0, shardsLive: () => 2, storeUp: () => true, siteUsage: async () => [] } })
  const networks = new Networks(store)
  const orphans = new Orphans({ store, warn })
  const coordinator = { draining: false, alternates: () => ['ws://there'], holdings: 0, fetchOnly: 0 }
  const quarantine = new Quarantine({
    store,
    config,
    shard: SHARD,
    sessions,
    metrics,
    warn,
    networks,
    unlist: async (session) => {
      coordinator.holdings -= session.assets.size
      await store.updatePeer(/** @type {string} */ (session.peerId), [], session.keys([...session.assets]))
      session.assets.clear()
    }
  })
  const relay = new Relay({ shard: SHARD, store, sessions, counters, onReport: (message) => quarantine.receive(message) })
  await relay.start()
  let lastTick = 0
  /** @type {import('../src/handlers/index.js').HandlerContext} */
  const context = {
    store,
    config,
    shard: SHARD,
    sessions,
    ice: new Ice(config, ''),
    relay,
    counters,
    metrics,
    clock: () => (lastTick = Math.max(Date.now(), lastTick + 1)),
    warn,
    coordinator,
    orphan: (id, assets) => orphans.add(id, assets),
    quarantine,
    networks,
    usage: new UsageTally({ store, config, clock: Date.now, metrics, warn }),
    limits: new ClientLimits(config, now)
  }
  let connections = 0
  return {
    context,
    store,
    config,
    coordinator,
    orphans,
    warnings,
    sessions,
    /** @param {number} ms move the sessions' clock on */
    advance (ms) { time += ms },

    /**
     * A connection that has not joined.
     * @param {{ ip?: string, origin?: string }} [from]
     */
    open ({ ip = '192.0.2.1', origin = 'https://shop.example' } = {}) {
      const session = new Session(/** @type {any} */ (new FakeSocket()), config, { id: ++connections, now })
      session.ip = ip
      session.origin = origin
      return session
    },

    /**
     * A message as the coordinator takes it: validated (envelope and fields), then its type's handler.
     * @param {Session} session
     * @param {Record<string, unknown>} message
     * @returns {Promise<any>} the reply (undefined: none)
     */
    async send (session, message) {
      return this.handle(session, message)
    },

    /**
     * The same, what the handler returns as it returns it: a reply at once, or a promise of one.
     * @param {Session} session
     * @param {Record<string, unknown>} message
     * @returns {any}
     */
    handle (session, message) {
      const valid = validateMessage(message, config)
      return HANDLERS[valid.type].handle(valid, session, context)
    },

    /**
     * A peer joined with `have` (from its own network, unless `from` says otherwise).
     * @param {string[]} [have]
     * @param {{ ip?: string, origin?: string }} [from]
     */
    async joined (have = [], from = { ip: `198.51.100.${connections + 1}` }) {
      const session = this.open(from)
      await this.send(session, { type: 'join', have })
      return /** @type {Session & { peerId: string }} */ (session)
    },

    /** @param {Session} session @returns {any[]} what its socket was sent, taken */
    received (session) {
      const socket = /** @type {FakeSocket} */ (/** @type {unknown} */ (session.ws))
      return socket.sent.splice(0)
    },

    /**
     * @param {string} series a metric's name, with its labels if it has any (`maygh_reports_total{reason="miss"}`)
     * @returns {Promise<number>} its value now (NaN: not exported)
     */
    async metric (series) {
      const { body } = await metrics.text()
      const line = body.split('\n').find((l) => l.startsWith(`${series} `))
      return Number(line?.slice(series.length + 1))
    },

    async close () {
      await relay.stop()
      await store.close()
    }
  }
}
