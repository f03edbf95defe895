/**
 * Which assets any visitor holds, asked of the coordinator by the service
 * worker (`GET /held`, protocol `heldUrl`) while its page's script has not
 * yet said hello: an asset nobody holds goes to the origin at once instead of
 * waiting for the page's script, its join and an empty lookup (on the demo
 * shop a returning visitor's first image request reached the worker about
 * 300 ms before that empty lookup came back). The requests of one turn go as
 * one (at most maxLookupHashes each). Asked only while the worker's own socket
 * is down: while it is up, the worker looks them up over it instead (worker.js
 * `heldFor`: one round trip, where the HTTP request may need a new connection
 * first, and the page gets the holders too). No answer within `timeoutMs`, or
 * any error, says nothing (null): the page's own lookup decides, as without it.
 */
import { LIMITS, heldUrl } from '../../protocol/index.js'
import { TurnBatch } from './turn-batch.js'

export class HeldCheck {
  /**
   * @param {object} o
   * @param {string[]} o.urls the coordinators' WebSocket URLs (one is asked, picked at random once)
   * @param {number} o.timeoutMs
   */
  constructor ({ urls, timeoutMs }) {
    const url = this.url = urls[Math.floor(Math.random() * urls.length)]
    this.timeoutMs = timeoutMs
    /** @type {TurnBatch<void, Set<string> | null>} */
    this.batch = new TurnBatch(LIMITS.maxLookupHashes, () => {}, async (hashes) => {
      const res = await fetch(heldUrl(url, hashes), { signal: AbortSignal.timeout(timeoutMs), credentials: 'omit', cache: 'no-store' })
      const body = res.ok ? await res.json() : null
      return Array.isArray(body?.held) ? new Set(/** @type {string[]} */ (body.held)) : null
    })
  }

  /**
   * @param {string} hash
   * @returns {Promise<boolean | null>} whether any visitor holds it; null: not known
   */
  held (hash) {
    return this.batch.add(hash).then((held) => held ? held.has(hash) : null, () => null)
  }
}
