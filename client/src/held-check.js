/**
 * Which assets any visitor holds, asked of the coordinator by the service
 * worker (`GET /held`, protocol `heldUrl`) while its page's script has not
 * yet said hello: an asset nobody holds goes to the origin at once instead of
 * waiting for the page's script, its join and an empty lookup (on the demo
 * shop a returning visitor's first image request reached the worker about
 * 300 ms before that empty lookup came back). The requests of one turn go as
 * one (at most maxLookupHashes each). No answer within `timeoutMs`, or any
 * error, says nothing (null): the page's own lookup decides, as without it.
 */
import { LIMITS, heldUrl } from '../../protocol/index.js'

export class HeldCheck {
  /**
   * @param {object} o
   * @param {string[]} o.urls the coordinators' WebSocket URLs (one is asked, picked at random once)
   * @param {number} o.timeoutMs
   */
  constructor ({ urls, timeoutMs }) {
    this.url = urls[Math.floor(Math.random() * urls.length)]
    this.timeoutMs = timeoutMs
    /** @type {{ hashes: Set<string>, reply: Promise<Set<string> | null> } | null} the check being gathered this turn */
    this.batch = null
  }

  /**
   * @param {string} hash
   * @returns {Promise<boolean | null>} whether any visitor holds it; null: not known
   */
  held (hash) {
    let batch = this.batch
    if (!batch) {
      /** @type {Set<string>} */
      const hashes = new Set()
      batch = this.batch = {
        hashes,
        reply: new Promise((resolve) => setTimeout(resolve)).then(async () => {
          if (this.batch === batch) this.batch = null
          const res = await fetch(heldUrl(this.url, [...hashes]), { signal: AbortSignal.timeout(this.timeoutMs), credentials: 'omit', cache: 'no-store' })
          const body = res.ok ? await res.json() : null
          return Array.isArray(body?.held) ? new Set(/** @type {string[]} */ (body.held)) : null
        }).catch(() => null)
      }
    }
    batch.hashes.add(hash)
    if (batch.hashes.size >= LIMITS.maxLookupHashes) this.batch = null
    return batch.reply.then((held) => held ? held.has(hash) : null)
  }
}
