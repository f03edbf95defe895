/**
 * `join`: a client introduces itself and what it already holds; it gets a peer
 * id and the ICE servers to use. Where the coordinator has token secrets, the
 * join must carry a token its site signed for the page's origin, and the
 * `welcome` carries a fresh one to join with next time.
 */
import { randomBytes } from 'node:crypto'
import { ERRORS, MayghError, RELAY_PROTOCOL_VERSION, VISITOR_KEY_PATTERN } from '../../../protocol/index.js'
import { MAX_TOKEN_LENGTH, signJoinToken, verifyJoinToken } from '../join-token.js'
import { subjectOf } from '../quarantine.js'
import { badField, optionalHashList } from '../fields.js'

/** Changes the peer's state: handled one at a time, in order with its other changes (Session.enqueue). */
export const ordered = true

/** @type {import('./index.js').Validator} */
export function validate (m, limits) {
  optionalHashList(m, 'have', limits.maxAssetsPerMessage)
  if (m.token !== undefined && (typeof m.token !== 'string' || m.token.length > MAX_TOKEN_LENGTH)) throw badField('token', `a string of at most ${MAX_TOKEN_LENGTH} characters`)
  if (m.visitor !== undefined && (typeof m.visitor !== 'string' || !VISITOR_KEY_PATTERN.test(m.visitor))) throw badField('visitor', '16-64 of [A-Za-z0-9_-]')
  if (m.fetchOnly !== undefined && typeof m.fetchOnly !== 'boolean') throw badField('fetchOnly', 'a boolean')
  if (m.fetchOnly === true && Array.isArray(m.have) && m.have.length) throw badField('have', 'empty: a fetch-only peer lists nothing')
}

/** @type {import('./index.js').Handler} */
export async function handle (message, session, { store, config, shard, sessions, ice, coordinator, orphan, metrics, networks, limits }) {
  if (session.peerId !== null) throw new MayghError(ERRORS.MGH_ERR_ALREADY_JOINED)
  if (coordinator.draining) throw new MayghError(ERRORS.MGH_ERR_DRAINING)
  // In privacy mode a client must understand the welcome's iceTransportPolicy, or it would connect directly.
  if (ice.relayOnly && Number(message.v ?? 1) < RELAY_PROTOCOL_VERSION) {
    throw new MayghError(ERRORS.MGH_ERR_BAD_VERSION, `this coordinator connects peers through its TURN relay only: protocol ${RELAY_PROTOCOL_VERSION} or later`)
  }
  // With secrets configured, only a page its site gave a token may join (join-token.js).
  if (config.tokenSecrets !== null) {
    session.visitor = verifyJoinToken(message.token, config.tokenSecrets, { origin: session.origin }).visitor
    // The visitor's rate limit follows it from its other addresses too (client-limits.js).
    limits.resume(session)
  }
  clearTimeout(session.joinTimer)
  session.joinTimer = undefined
  const id = `${shard}~${randomBytes(16).toString('base64url')}`
  // Who this visitor is for quarantine: the site's name for it, else its browser's key, else only this connection.
  const key = /** @type {string | undefined} */ (message.visitor)
  session.subject = session.visitor !== '' ? subjectOf('visitor', session.visitor) : key !== undefined ? subjectOf('key', key) : subjectOf('peer', id)
  session.quarantined = await store.isQuarantined(session.subject)
  // Paired within its network only: everything it lists is under its network's name.
  if (config.pairWithinNetwork) session.scope = `${await networks.name(session.ip)}/`
  // A quarantined visitor may still fetch; what it holds is not listed.
  const have = session.quarantined ? [] : [...new Set(/** @type {string[]} */ (message.have ?? []))]
  if (coordinator.holdings + have.length > config.maxHoldings) throw new MayghError(ERRORS.MGH_ERR_CAPACITY, `this coordinator lists ${config.maxHoldings} holdings at most`)
  // Reserved before the store call, so that joins in flight together cannot pass the cap.
  coordinator.holdings += have.length
  const started = performance.now()
  try {
    await store.addPeer(id, session.keys(have))
  } catch (err) {
    coordinator.holdings -= have.length
    // Maybe listed, maybe not (a timeout cannot tell); this id is never used again: remove it once the store is back.
    orphan(id, session.keys(have))
    throw err
  } finally {
    metrics.observeStore('join', performance.now() - started)
  }
  session.peerId = id
  session.assets = new Set(have)
  // A service worker's socket (client/src/worker-socket.js): not counted among the peers online.
  if (message.fetchOnly === true) {
    session.fetchOnly = true
    coordinator.fetchOnly++
  }
  sessions.set(id, session)
  return {
    type: 'welcome',
    id,
    ...ice.welcome(id),
    holding: have.length,
    alternates: coordinator.alternates(),
    ...(config.tokenSecrets === null ? {} : { token: signJoinToken({ origin: session.origin, visitor: session.visitor, ttlSeconds: config.tokenRenewSeconds }, config.tokenSecrets[0]) }),
    limits: {
      maxMessageBytes: config.maxMessageBytes,
      maxAssetsPerPeer: config.maxAssetsPerPeer,
      maxAssetsPerMessage: config.maxAssetsPerMessage
    }
  }
}
