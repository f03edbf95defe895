/**
 * `usage`: a visitor's asset bytes since its last report (from peers, from the
 * origin, from its store, served to peers) and the peer bytes per asset path,
 * summed per site (usage.js). Not counted from a quarantined visitor, nor from
 * a page that sent no `Origin` (there is no site to count it for).
 */

/** @type {import('./index.js').Handler} */
export async function usage (message, session, { usage }) {
  session.requirePeer()
  if (!session.quarantined && session.origin !== '') usage.add(session.origin, message)
  return message.ref === undefined ? undefined : { type: 'counted' }
}
