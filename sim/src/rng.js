/**
 * Seeded pseudo-random numbers (sfc32, a small fast generator that passes
 * PractRand) and a stateless integer hash, so that every run is reproducible
 * from its seed. Nothing in the simulator calls Math.random.
 */

/**
 * Mixes two 32-bit integers into one well-distributed 32-bit integer
 * (murmur3's finaliser over a combined word). Stateless: used for per-client and
 * per-object properties that must not depend on processing order.
 * @param {number} a
 * @param {number} b
 * @returns {number} unsigned 32-bit
 */
export function hash2 (a, b) {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A seeded generator of uniform, normal and exponential variates. */
export class Rng {
  /** @param {number} seed any integer */
  constructor (seed) {
    this.a = hash2(seed, 1) | 0
    this.b = hash2(seed, 2) | 0
    this.c = hash2(seed, 3) | 0
    this.d = 1
    /** second Box–Muller variate, NaN when none is cached */
    this.spare = NaN
    for (let i = 0; i < 16; i++) this.u32()
  }

  /** @returns {number} unsigned 32-bit integer */
  u32 () {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** @returns {number} uniform in [0, 1) */
  random () {
    return this.u32() / 4294967296
  }

  /**
   * @param {number} n exclusive upper bound (n ≤ 2^31)
   * @returns {number} uniform integer in [0, n)
   */
  int (n) {
    // truncation is the floor of a non-negative number, and keeps the result an int32
    return (this.random() * n) | 0
  }

  /** @returns {number} standard normal variate (Box–Muller, both halves used) */
  normal () {
    if (!Number.isNaN(this.spare)) {
      const s = this.spare
      this.spare = NaN
      return s
    }
    const u = 1 - this.random()
    const v = this.random()
    const r = Math.sqrt(-2 * Math.log(u))
    this.spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }

  /**
   * @param {number} mean
   * @returns {number} exponential variate with that mean
   */
  exponential (mean) {
    return -Math.log(1 - this.random()) * mean
  }
}

/**
 * A uniform in [0, 1) that is a pure function of its two arguments.
 * @param {number} a
 * @param {number} b
 * @returns {number}
 */
export function hashUniform (a, b) {
  return hash2(a, b) / 4294967296
}

/**
 * The random stream of a replay with this seed. The engine and the reference
 * model each start one here and take their draws in the same order (listed
 * in peer-lookup.js), which is what lets them agree exactly.
 * @param {number} seed the run's `--seed`
 * @returns {Rng}
 */
export function replayRng (seed) {
  return new Rng(seed * 7919 + 17)
}

/**
 * Whether a client runs the code at this adoption: decided by a hash of its
 * id and the seed, not by the random stream, so it does not depend on the
 * order clients appear in, and larger fractions contain smaller ones.
 * @param {number} client
 * @param {number} adoption fraction of clients, 0–1
 * @param {number} seed the run's `--seed`
 * @returns {boolean}
 */
export function adopts (client, adoption, seed) {
  return adoption >= 1 || hashUniform(client, seed ^ 0x5bd1e995) < adoption
}

/** salts of the per-client traits, one each so that the traits are independent of each other and of adoption */
const TRAIT_SALTS = Object.freeze({ untraversable: 0x27d4eb2f, receiveOnly: 0x165667b1 })

/**
 * Whether a client has a trait that a fraction of clients have (behind a NAT
 * no connection traverses, receive-only): like `adopts`, a hash of the client
 * and the seed, never a draw, so a client keeps it for the whole run and
 * larger fractions contain smaller ones.
 * @param {number} client
 * @param {keyof typeof TRAIT_SALTS} trait
 * @param {number} fraction 0–1
 * @param {number} seed the run's `--seed`
 * @returns {boolean}
 */
export function hasTrait (client, trait, fraction, seed) {
  return fraction >= 1 || hashUniform(client, seed ^ TRAIT_SALTS[trait]) < fraction
}
