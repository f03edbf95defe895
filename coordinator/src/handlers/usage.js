/**
 * `usage`: a visitor's asset bytes since its last report (from peers, from the
 * origin, from its store, served to peers) and the peer bytes per asset path,
 * summed per site (usage.js). Not counted from a quarantined visitor, nor from
 * a page that sent no `Origin` (there is no site to count it for), nor twice
 * when it carries an `id` the site has counted already (the first
 * USAGE_IDS_PER_SOCKET of a socket's ids are checked; later ones count as
 * they come).
 */
import { LIMITS, MAX_USAGE_BYTES, USAGE_ID_PATTERN, USAGE_SOURCES } from '../../../protocol/index.js'
import { badField } from '../fields.js'
import { USAGE_IDS_PER_SOCKET } from '../usage.js'

/** Reads or relays: runs as it comes, after the peer's earlier changes but holding up none (Session.after). */
export const ordered = false

/** @type {import('./index.js').Validator} */
export function validate (m) {
  for (const source of USAGE_SOURCES) if (m[source] !== undefined && !isByteCount(m[source])) throw badField(source, `an integer from 0 to ${MAX_USAGE_BYTES}`)
  if (m.id !== undefined && (typeof m.id !== 'string' || !USAGE_ID_PATTERN.test(m.id))) throw badField('id', '1 to 32 letters, digits, _ or -')
  if (m.assets === undefined) return
  if (!Array.isArray(m.assets) || m.assets.length > LIMITS.maxUsageAssets) throw badField('assets', `an array of at most ${LIMITS.maxUsageAssets} [path, bytes] pairs`)
  for (const pair of m.assets) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || !pair[0].startsWith('/') || pair[0].length > LIMITS.maxUsagePath || !isByteCount(pair[1])) {
      throw badField('assets', `[path, bytes] pairs: a path starting with / of at most ${LIMITS.maxUsagePath} characters, an integer from 0 to ${MAX_USAGE_BYTES}`)
    }
  }
}

/** @param {unknown} n @returns {n is number} */
const isByteCount = (n) => Number.isInteger(n) && /** @type {number} */ (n) >= 0 && /** @type {number} */ (n) <= MAX_USAGE_BYTES

/** @type {import('./index.js').Handler} */
export async function handle (message, session, { usage }) {
  session.requirePeer()
  if (!session.quarantined && session.origin !== '') {
    const checked = message.id === undefined || ++session.usageIds <= USAGE_IDS_PER_SOCKET
    await usage.add(session.origin, checked ? message : { ...message, id: undefined })
  }
  return message.ref === undefined ? undefined : { type: 'counted' }
}
