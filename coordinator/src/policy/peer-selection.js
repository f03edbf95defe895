/**
 * Peer-selection policy: which holders of an asset a lookup hands out.
 *
 * Shared by the coordinator (`handlers/lookup.js`) and the simulator (`sim/`), so
 * that the simulator measures the policy that really runs. It is pure: callers
 * supply the candidates and two accessors, and record the choice themselves.
 *
 * Callers record as chosen the holder the asker will try first (the coordinator
 * marks the first it returns; the simulator the one that served), since that is
 * where the upload lands; the others are only fallbacks.
 *
 * Order: peers the asker already has a channel to come first (no connection
 * set-up, no new NAT traversal), then the least recently chosen (spreads upload
 * load across holders). Ties keep candidate order, so a caller that samples its
 * candidates at random gets random tie-breaking for free.
 */

/** Defaults for the policy's knobs; the coordinator's config and the simulator's flags start here. */
export const POLICY_DEFAULTS = Object.freeze({
  /** holders a lookup returns at most */
  maxHolders: 3,
  /** holders a store reads per lookup before ranking (bounds the work for popular assets) */
  candidateSample: 32
});

/** rank keys of the list being built, reused by every call (the function never re-enters) */
let scratchKeys = new Float64Array(8)

/**
 * Choose up to `count` holders for `asker` from `candidates`.
 *
 * Runs in O(candidates × count) with no allocation besides the result, so the
 * simulator can call it per request at millions of requests a second.
 *
 * @template T
 * @param {ArrayLike<T>} candidates holders of the asset (may include the asker)
 * @param {object} options
 * @param {T} options.asker the peer asking; never chosen
 * @param {number} [options.count] how many to return at most
 * @param {(id: T) => number} options.lastChosen when `id` was last handed out (0 = never)
 * @param {(id: T) => boolean} [options.isConnected] whether the asker already has a channel to `id`
 * @param {(id: T) => boolean} [options.accept] false excludes `id` (offline, over its upload cap, …);
 *   asked only about candidates that rank high enough to be chosen, so it must not depend on call order
 * @returns {T[]} chosen holders, best first
 */
export function selectHolders (candidates, options) {
  const { asker, lastChosen, isConnected, accept } = options
  const count = options.count ?? POLICY_DEFAULTS.maxHolders
  /** @type {T[]} */
  const chosen = []
  if (!(count >= 1)) return chosen
  if (scratchKeys.length < Math.min(count, candidates.length)) scratchKeys = new Float64Array(candidates.length)
  // rank keys of `chosen`, parallel array
  const keys = scratchKeys
  for (let i = 0; i < candidates.length; i++) {
    const id = candidates[i]
    if (id === asker) continue
    // Connected peers sort before all others: subtract a constant larger than any timestamp.
    const key = (isConnected !== undefined && isConnected(id) ? -1e15 : 0) + lastChosen(id)
    if (chosen.length === count && key >= keys[count - 1]) continue
    // `accept` is asked only about candidates that would make the list: the
    // same result as filtering first, for a fraction of the calls.
    if (accept !== undefined && !accept(id)) continue
    // Insertion into the short sorted list; a strict `>` keeps earlier candidates ahead on ties.
    let at = chosen.length === count ? count - 1 : chosen.length
    while (at > 0 && keys[at - 1] > key) {
      chosen[at] = chosen[at - 1]
      keys[at] = keys[at - 1]
      at--
    }
    chosen[at] = id
    keys[at] = key
  }
  return chosen
}
