/**
 * Peer-selection policy: which holders of an asset a lookup hands out.
 *
 * Shared by the coordinator (`handlers/lookup.js`) and the simulator (`sim/`), so
 * that the simulator measures the policy that really runs. It is pure: callers
 * supply the candidates and two accessors, and record the choice themselves.
 * The coordinator calls `selectHolders`; the simulator, which must rank
 * millions of lookups a second, offers candidates to a `HolderRanking` from
 * inside its own sampling loop. `selectHolders` is that same loop over a list,
 * so there is one ranking, whichever way it is driven.
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
})

/** Added to a connected holder's rank: more negative than any `lastChosen` is positive, so they sort first. */
const CONNECTED_FIRST = -1e15

/**
 * A holder's rank: lower is better.
 * @param {boolean} connected whether the asker already has a channel to it
 * @param {number} lastChosen when a lookup last handed it out (0 = never)
 * @returns {number}
 */
export function rankKey (connected, lastChosen) {
  return connected ? CONNECTED_FIRST + lastChosen : lastChosen
}

/**
 * The best-ranked holders of one lookup so far, best first. Candidates are
 * offered in candidate order; `admits` says whether one of a given rank would
 * enter the list, so a caller asks its costlier questions (`accept`) only
 * about candidates that would: the same result as filtering first, for a
 * fraction of the questions. Reusable: `reset` starts the next lookup.
 * @template T
 */
export class HolderRanking {
  /** @param {number} count how many holders to keep at most */
  constructor (count) {
    /** @type {T[]} */
    this.ids = []
    /** rank keys of `ids`, parallel; grows with the list, not with `count` (which may be huge) */
    this.keys = new Float64Array(Math.min(Math.max(1, count), 8))
    this.count = count
    /** holders kept */
    this.size = 0
    /** the rank a candidate must beat to enter: the worst kept once the list is full */
    this.worst = count >= 1 ? Infinity : -Infinity
  }

  /**
   * Empties the list for the next lookup.
   * @param {number} count
   */
  reset (count) {
    this.count = count
    this.size = 0
    this.worst = count >= 1 ? Infinity : -Infinity
  }

  /**
   * @param {number} key a candidate's `rankKey`
   * @returns {boolean} whether a candidate of that rank would enter the list
   */
  admits (key) {
    return key < this.worst
  }

  /**
   * Enters a candidate that `admits` its key, dropping the worst when full.
   * A strict `>` keeps earlier candidates ahead of later ones of equal rank.
   * @param {T} id
   * @param {number} key
   */
  insert (id, key) {
    const ids = this.ids
    let at = this.size === this.count ? this.count - 1 : this.size++
    if (at === this.keys.length) {
      const grown = new Float64Array(at * 2)
      grown.set(this.keys)
      this.keys = grown
    }
    const keys = this.keys
    while (at > 0 && keys[at - 1] > key) {
      ids[at] = ids[at - 1]
      keys[at] = keys[at - 1]
      at--
    }
    ids[at] = id
    keys[at] = key
    if (this.size === this.count) this.worst = keys[this.count - 1]
  }
}

/**
 * Choose up to `count` holders for `asker` from `candidates`.
 *
 * Runs in O(candidates × count) and allocates only its result.
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
  if (!(count >= 1)) return []
  /** @type {HolderRanking<T>} */
  const ranking = new HolderRanking(count)
  for (let i = 0; i < candidates.length; i++) {
    const id = candidates[i]
    if (id === asker) continue
    const key = rankKey(isConnected !== undefined && isConnected(id), lastChosen(id))
    if (ranking.admits(key) && (accept === undefined || accept(id))) ranking.insert(id, key)
  }
  return ranking.ids.slice(0, ranking.size)
}
