/**
 * The message types clients may send, each by its module (one per type, named
 * after it): `validate` checks the type's fields once message-parser.js has
 * checked the envelope, and throws a coded MayghError; `ordered` says whether the
 * type changes the peer's state (its requests then run one at a time, in order:
 * Session.enqueue; the others run as they come: Session.after); `handle` takes the
 * validated message, the sender's session and the context it needs (one per
 * coordinator, shared by every session), and returns the reply (without `ref`;
 * the caller adds it) or nothing, or a promise of either.
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
 * @property {{ draining: boolean, alternates: () => string[], holdings: number, fetchOnly: number }} coordinator what handlers ask of
 *   the coordinator: whether it drains, the alternates, the holdings its peers list (against maxHoldings), and how many of its peers joined fetch-only
 * @property {(id: string, assets: readonly string[]) => void} orphan a peer the store may list though no session has it: removed once the store answers
 * @property {import('../quarantine.js').Quarantine} quarantine reports and quarantine
 * @property {import('../networks.js').Networks} networks names visitors' networks (pairWithinNetwork)
 * @property {import('../usage.js').UsageTally} usage visitors' byte reports, summed per site
 * @property {import('../client-limits.js').ClientLimits} limits rate limits kept across a client's sockets
 *
 * @typedef {(message: import('../message-parser.js').Message, session: import('../session.js').Session, context: HandlerContext) => Promise<object | undefined> | object | undefined} Handler
 *   may answer at once (its reply, or a throw) when it has nothing to wait for: `connect` to a peer on this shard
 * @typedef {(message: import('../message-parser.js').Fields, limits: import('../message-parser.js').ParseLimits) => void} Validator
 *   throws MayghError (MGH_ERR_BAD_FIELD, MGH_ERR_TOO_MANY_ASSETS) for a field that breaks the contract
 * @typedef {{ readonly validate: Validator, readonly handle: Handler, readonly ordered: boolean }} MessageType
 *   `ordered`: the type changes the peer's state (join, update), so its requests run one at a time, in order
 */
import { REQUEST_TYPES } from '../../../protocol/index.js'
import * as join from './join.js'
import * as update from './update.js'
import * as lookup from './lookup.js'
import * as held from './held.js'
import * as connect from './connect.js'
import * as report from './report.js'
import * as usage from './usage.js'

/**
 * @param {MessageType} module a handler's module
 * @returns {MessageType} its validator, handler and whether it is ordered, and nothing else it exports (one shape for every type)
 */
const messageType = ({ validate, handle, ordered }) => Object.freeze({ validate, handle, ordered })

/** @type {Readonly<Record<string, MessageType>>} the one table of request types */
export const HANDLERS = Object.freeze({ join: messageType(join), update: messageType(update), lookup: messageType(lookup), held: messageType(held), connect: messageType(connect), report: messageType(report), usage: messageType(usage) })

// Exactly the contract's request types, in its order (handlers.test.js says which is missing).
if (Object.keys(HANDLERS).join() !== REQUEST_TYPES.join()) throw new Error('handlers/index.js: HANDLERS do not match REQUEST_TYPES')

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
