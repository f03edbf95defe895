/**
 * `connect`: relay a WebRTC signal (offer, answer, ICE candidate) to another
 * peer it was introduced to (introductions.js: a lookup handed it that peer,
 * or that peer signalled it first), within the introduction's time and bytes;
 * directly when its socket is on this shard, else over the store's bus to
 * the shard its id names, if that shard is live and a coordinator listens as it
 * (one that died since its last beat does not: refused at once, not after its
 * entry expires). A request with a `ref` is acknowledged with
 * `relayed` once the signal is handed to the target's socket or to its shard's
 * bus, so a client never waits out a timer on success; one without a `ref`
 * (trickled ICE candidates) gets no reply unless it fails.
 */
import { ERRORS, MayghError, shardOfPeer } from '../../../protocol/index.js'
import { relayFrame } from '../relay.js'
import { MAX_SIGNAL_DEPTH, badField, isPeerId, isSignal } from '../fields.js'

/** Reads or relays: runs as it comes, after the peer's earlier changes but holding up none (Session.after). */
export const ordered = false

/** @type {import('./index.js').Validator} */
export function validate (m) {
  if (!isPeerId(m.to)) throw badField('to', 'a peer id')
  if (!isSignal(m.signal)) throw badField('signal', `an object nested at most ${MAX_SIGNAL_DEPTH} deep`)
}

/** @type {import('./index.js').Handler} */
export function handle (message, session, context) {
  const from = session.requirePeer().peerId
  const to = /** @type {string} */ (message.to)
  if (to === from) throw new MayghError(ERRORS.MGH_ERR_BAD_FIELD, '"to" must be another peer')
  const reply = message.ref === undefined ? undefined : { type: 'relayed', to }
  // To this shard: delivered (or refused) already, answered at once; to another: once on the bus.
  const bus = relaySignal(from, to, /** @type {object} */ (message.signal), session, context)
  return bus === undefined ? reply : bus.then(() => reply)
}

/**
 * Hand one signal from the session's peer to a peer it was introduced to
 * (charged to that introduction's budget): `connect`'s, and each offer a
 * `lookup` carries (protocol 3).
 * @param {string} from
 * @param {string} to
 * @param {Record<string, any>} original as the sender sent it (in privacy mode, held to relay candidates before it goes on)
 * @param {import('../session.js').Session} session
 * @param {import('./index.js').HandlerContext} context
 * @returns {Promise<void> | undefined} to a peer on this shard, nothing: delivered when this returns
 *   (no promise, no microtask: the common case, on the hot path); to a peer on another shard, the
 *   hand-over to the bus. Throws (or rejects) MGH_ERR_RELAY_ONLY, MGH_ERR_NOT_INTRODUCED,
 *   MGH_ERR_SIGNAL_BUDGET or MGH_ERR_UNKNOWN_PEER
 */
export function relaySignal (from, to, original, session, { store, relay, metrics, ice, shard: here }) {
  const signal = ice.pass(original)
  // Serialised once: what the introduction is charged is the frame its target is sent.
  const frame = relayFrame(from, signal)
  // One reading of the clock for both ends' introductions (the sender's charged, the target's renewed)
  // and, unless the sessions run on a test's clock, for the hand-over's time: 3 per relayed frame, not 5.
  const now = session.now()
  session.introduced().spend(to, frame.length, now)
  const shard = shardOfPeer(to)
  const started = session.realClock ? now : performance.now()
  if (shard !== here) return viaBus(shard, to, from, signal, { store, relay, metrics }, started)
  if (!relay.deliverFrame(to, from, frame, now)) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_PEER, to)
  metrics.observeRelay('local', performance.now() - started)
}

/**
 * A signal for a peer on another shard: to that shard over the store's bus.
 * @param {string} shard
 * @param {string} to
 * @param {string} from
 * @param {object} signal
 * @param {Pick<import('./index.js').HandlerContext, 'store' | 'relay' | 'metrics'>} context
 * @param {number} started when the relay began (performance.now)
 */
async function viaBus (shard, to, from, signal, { store, relay, metrics }, started) {
  // A shard started since the last beat is not known yet: read the registry once.
  if (!store.isLive(shard)) await store.refresh()
  if (!store.isLive(shard)) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_PEER, to)
  // Sent together (one round trip): a signal for a peer that has left is dropped by its shard.
  const [listed, heard] = await Promise.all([store.hasPeer(to), relay.forward(shard, to, from, signal)])
  metrics.observeRelay('bus', performance.now() - started)
  if (!listed || !heard) throw new MayghError(ERRORS.MGH_ERR_UNKNOWN_PEER, to)
}
