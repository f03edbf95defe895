/**
 * Handlers by message type. Each takes the validated message, the sender's
 * session and the context it needs (one per coordinator, shared by every
 * session), and returns the reply (without `ref`; the caller adds it) or
 * nothing, or a promise of either.
 *
 * @typedef {object} HandlerContext
 * @property {import('../store/store.js').Store} store
 * @property {Readonly<import('../config.js').Config>} config
 * @property {string} shard this coordinator's shard id
 * @property {Map<string, import('../session.js').Session>} sessions joined peers on this shard
 * @property {import('../ice.js').Ice} ice what `welcome` says of ICE, and what signals may carry (privacy mode)
 * @property {import('../relay.js').Relay} relay
 * @property {Record<string, number>} counters
 * @property {import('../metrics.js').Metrics} metrics
 * @property {() => number} clock ms since the epoch, strictly increasing per coordinator (orders lookups' choices)
 * @property {(err: Error, context: string) => void} warn
 * @property {{ draining: boolean, alternates: () => string[], holdings: number }} coordinator what handlers ask of
 *   the coordinator: whether it drains, the alternates, and the holdings its peers list (against maxHoldings)
 * @property {(id: string, assets: readonly string[]) => void} orphan a peer the store may list though no session has it: removed once the store answers
 * @property {import('../quarantine.js').Quarantine} quarantine reports and quarantine
 * @property {import('../networks.js').Networks} networks names visitors' networks (pairWithinNetwork)
 * @property {import('../usage.js').UsageTally} usage visitors' byte reports, summed per site
 * @property {import('../client-limits.js').ClientLimits} limits rate limits kept across a client's sockets
 *
 * @typedef {(message: import('../message-parser.js').Message, session: import('../session.js').Session, context: HandlerContext) => Promise<object | undefined> | object | undefined} Handler
 *   may answer at once (its reply, or a throw) when it has nothing to wait for: `connect` to a peer on this shard
 */
import { join } from './join.js'
import { update } from './update.js'
import { lookup } from './lookup.js'
import { connect } from './connect.js'
import { report } from './report.js'
import { usage } from './usage.js'

/** @type {Readonly<Record<string, Handler>>} */
export const HANDLERS = Object.freeze({ join, update, lookup, connect, report, usage })

/**
 * What a request answers when the store has not let it finish within
 * storeTimeoutMs: a lookup, no holders (as when the store fails); anything
 * else null (MGH_ERR_STORE).
 * @param {import('../message-parser.js').Message} message
 * @returns {object | null}
 */
export function lateReply (message) {
  if (message.type !== 'lookup') return null
  if (message.hashes === undefined) return { type: 'holders', hash: message.hash, peers: [] }
  return { type: 'holders', found: Object.fromEntries(/** @type {string[]} */ (message.hashes).map((hash) => [hash, []])) }
}

/** Types that change the peer's state: handled one at a time, in order, per peer. */
export const ORDERED_TYPES = Object.freeze(new Set(['join', 'update']))
