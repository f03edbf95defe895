/**
 * Where a client's page views begin: one rule, shared by the simulator's
 * model (engine.js, reference-model.js) and the crowd that replays a log
 * through the real system (`swarm/`), so both group a log's requests into
 * the same pages. A page's assets load together, under one page script: one
 * coordinator connection, one set of peer channels (they close with the page).
 *
 * A view begins at every page request (`FLAG_PAGE`: a navigation, 200 or
 * 304). An asset request begins one too when the client has no view open: it
 * is the first request of the client's session, or it comes more than
 * `PAGE_IDLE_S` after the client's previous request (a page whose HTML the log
 * does not show, such as one the browser had cached, and whose assets came
 * later than a page's own assets do).
 */
import { FLAG_PAGE } from './batch.js'

/** seconds after a client's previous request past which an asset request is taken as a new page view's */
export const PAGE_IDLE_S = 30

/**
 * @param {number} flags the request's batch flags
 * @param {number} sinceLast seconds since the same client's previous request in this session (Infinity: none)
 * @returns {boolean} whether this request begins a new page view
 */
export function startsPageView (flags, sinceLast) {
  return (flags & FLAG_PAGE) !== 0 || !(sinceLast <= PAGE_IDLE_S)
}
