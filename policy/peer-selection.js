/**
 * Peer-selection policy: which holders of an asset a lookup hands out, and
 * which one it records as chosen. One rule in three steps, shared by the
 * coordinator and the simulator (`sim/`) so that the simulator measures the
 * policy that really runs; both call the code below, neither has a copy:
 *
 * 1. Sample (`sampleStart`, `sampleNext`): a lookup reads at most
 *    `candidateSample` of an asset's holders. It starts at a random position
 *    of the holder list when the list is longer than the sample (at 0
 *    otherwise) and walks forward, wrapping, until it has read that many live
 *    holders or the whole list: every holder is reachable, at O(sample) cost.
 *    The coordinator's memory store walks its list of holders, counting only
 *    those on live shards; the simulator walks its index, whose lists also
 *    hold stale records of ended sessions, which the walk reads but does not
 *    count. The Redis store samples server-side instead (one HRANDFIELD …
 *    WITHVALUES on the asset's hash of holder → last chosen, then drops
 *    holders on dead shards): a different random draw of the same size; the
 *    steps below are the same.
 * 2. Rank (`rankKey`, `HolderRanking`): never the asker; peers the asker
 *    already has a channel to first (no connection set-up, no new NAT
 *    traversal), then the holder whose entry for this asset was least
 *    recently marked (0 = never marked for this asset; spreads upload load
 *    across an asset's holders). Recency is the holder entry's (asset,
 *    peer), not the peer's: a peer's marks for other assets do not count, so
 *    that a lookup reads one asset's holders and their times in one round
 *    trip. Ties keep sample order, so a random sample gives random
 *    tie-breaking for free. At most `maxHolders` are kept, best first.
 * 3. Mark (`HolderRanking#marked`): the lookup records the first holder it
 *    hands out as chosen at this lookup's time, on that holder's entry for
 *    this asset only, since the asker tries it first and falls back to the
 *    others only if it fails: the first is where the upload lands. The
 *    coordinator marks the entry in its store (`markChosen([[hash, id]…], at)`);
 *    the simulator in its index record. An entry starts at 0 (never chosen)
 *    whenever it is (re)created: a new session listing what it holds, an
 *    asset added again after an eviction.
 *
 * Pure and allocation-free per lookup: callers supply the holders, their
 * times and connections, and a random source, and record the choice
 * themselves. The simulator runs millions of lookups a second through this
 * code: small pure functions whose counts the caller keeps, and one reused
 * object, all of which V8 inlines into its loop.
 * sim/test/shared-policy.test.js holds the coordinator's lookup and the
 * simulator's against each other.
 */

/** Defaults for the policy's knobs; the coordinator's config and the simulator's flags start here. */
const policyDefaults = {
  /** holders a lookup returns at most */
  maxHolders: 3,
  /** holders a store reads per lookup before ranking (bounds the work for popular assets) */
  candidateSample: 32
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const POLICY_DEFAULTS = Object.freeze(policyDefaults)

/**
 * Where random numbers come from: `Math` in the coordinator, the simulator's
 * seeded `Rng` (sim/src/rng.js), which is what makes a replay reproducible.
 * @typedef {{ random (): number }} RandomSource uniform in [0, 1)
 */

/**
 * Step 1, the sample: the first position of a holder list a lookup reads.
 * Draws one random number, and only when the list is longer than the sample.
 * @param {number} length records in the holder list (stale ones included)
 * @param {number} want live holders to read at most (`candidateSample`)
 * @param {RandomSource} random
 * @returns {number} the position, or -1 when there is nothing to read
 */
export function sampleStart (length, want, random) {
  if (length === 0 || !(want >= 1)) return -1
  // `| 0` floors (the product is not negative, and lists are shorter than 2^31) and
  // keeps the position a small integer: a float would slow the simulator's indexing
  return length > want ? (random.random() * length) | 0 : 0
}

/**
 * Step 1, the sample: the position a lookup reads after `pos`, walking
 * forward and wrapping, until it has read `want` live holders or every record.
 * Pure, with the walk's counts kept by the caller, so that the simulator's
 * loop keeps them in registers.
 * @param {number} pos the position just read
 * @param {number} read records read so far, `pos`'s included
 * @param {number} taken live holders among them
 * @param {number} length records in the list
 * @param {number} want as given to `sampleStart`
 * @returns {number} the next position, or -1 when the sample is complete
 */
export function sampleNext (pos, read, taken, length, want) {
  if (taken === want || read === length) return -1
  return pos + 1 === length ? 0 : pos + 1
}

/** Added to a connected holder's rank: more negative than any `lastChosen` is positive, so they sort first. */
const CONNECTED_FIRST = -1e15

/**
 * Step 2: a holder's rank, lower is better.
 * @param {boolean} connected whether the asker already has a channel to it
 * @param {number} lastChosen when a lookup of this asset last marked its entry (0 = never)
 * @returns {number}
 */
export function rankKey (connected, lastChosen) {
  return connected ? CONNECTED_FIRST + lastChosen : lastChosen
}

/**
 * Steps 2 and 3: the best-ranked holders of one lookup so far, best first.
 * Sampled holders are offered in sample order: `wants` says whether one would
 * enter the list (not the asker, and ranked better than the worst kept once
 * the list is full), then the caller asks any costlier question of its own
 * (the simulator's: will this holder stay online through a connection
 * set-up, is it under its upload cap?) and calls `insert`. Asking only about
 * holders that would enter gives the same list as asking about all first, for
 * a fraction of the questions. Reusable: `reset` starts the next lookup.
 * @template T
 */
export class HolderRanking {
  /**
   * @param {number} count how many holders to keep at most (`maxHolders`)
   * @param {T} asker the peer asking, never kept
   */
  constructor (count, asker) {
    /** @type {T[]} */
    this.ids = []
    /** rank keys of `ids`, parallel; grows with the list, not with `count` (which may be huge) */
    this.keys = new Float64Array(Math.min(Math.max(1, count), 8))
    this.count = count
    this.asker = asker
    /** holders kept */
    this.size = 0
    /** the rank a holder must beat to enter: the worst kept once the list is full */
    this.worst = count >= 1 ? Infinity : -Infinity
  }

  /**
   * Empties the list for the next lookup.
   * @param {number} count
   * @param {T} asker
   */
  reset (count, asker) {
    this.count = count
    this.asker = asker
    this.size = 0
    this.worst = count >= 1 ? Infinity : -Infinity
  }

  /**
   * @param {T} id a sampled holder
   * @param {number} key its `rankKey`
   * @returns {boolean} whether it would enter the list
   */
  wants (id, key) {
    return key < this.worst && id !== this.asker
  }

  /**
   * Enters a holder that `wants` said would enter, dropping the worst when
   * full. A strict `>` keeps earlier holders ahead of later ones of equal rank.
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

  /**
   * Step 3: the holder the lookup records as chosen: the first handed out.
   * Only when the list is not empty (`size > 0`).
   * @returns {T}
   */
  marked () {
    return this.ids[0]
  }
}
