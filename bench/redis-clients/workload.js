/**
 * The data and the commands of the Redis client benchmark (bench/redis-clients.js):
 * the coordinator's keys and Lua scripts as coordinator/src/store/redis-store.js
 * writes them, and a data set that the parent (which loads it) and each trial
 * process (which reads and changes it) derive alike from indices, so nothing
 * but a few numbers passes between them.
 */
import { createHash } from 'node:crypto'

/** Holders read per lookup (the coordinator's default candidateSample). */
export const SAMPLE = 32
/** Assets with holders; each lookup asks for one of them at random. */
export const HASHES = 1024
/** Holders each asset starts with, besides the callers' own peers. */
export const FIELDS_PER_HASH = 10
/** Commands per transaction: a lookup, a mark and a change. */
export const COMMANDS_PER_TRANSACTION = 3

// Key names as redis-store.js builds them (a hash tag keeps keys used together in one slot).
/** @param {string} hash */
export const holdersKey = (hash) => `mgh:h:{${hash}}`
/** @param {string} id */
export const assetsKey = (id) => `mgh:a:{${id}}`

/** redis-store.js's MARK_LUA: sets a holder's time only if the holder is still listed. */
export const MARK_LUA = "if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0"

/**
 * The CHANGE_LUA redis-store.js sent before redis-batch.js replaced it (on one
 * Redis the batch's `c` operation does the same; a Cluster sends SREM, SADD,
 * HDEL and HSETNX), kept so the figures stay comparable: one peer's change of
 * holdings as one command. KEYS: the peer's asset set, then
 * one holder hash per asset; ARGV: the peer id, how many of the assets are
 * removals (they come first), then the assets in the keys' order.
 */
export const CHANGE_LUA = `
local id = ARGV[1]
local removals = tonumber(ARGV[2])
for i = 2, #KEYS do
  if i - 1 <= removals then
    redis.call('SREM', KEYS[1], ARGV[i + 1])
    redis.call('HDEL', KEYS[i], id)
  else
    redis.call('SADD', KEYS[1], ARGV[i + 1])
    redis.call('HSETNX', KEYS[i], id, 0)
  end
end
return 0`

/**
 * @param {string} text
 * @returns {Buffer} its SHA-256
 */
const sha256 = (text) => createHash('sha256').update(text).digest()

/**
 * @param {number} i
 * @returns {string} asset i's name, an SRI sha256 name as the client sends it
 */
export function assetHash (i) {
  return `sha256-${sha256(`asset ${i}`).toString('base64')}`
}

/**
 * A peer id as the coordinator makes them: `s<shard>.p<peer>` in hex.
 * @param {string} kind 'seed' for the holders loaded beforehand, 'caller' for the callers' own peers
 * @param {number} i
 * @returns {string}
 */
export function peerId (kind, i) {
  const hex = sha256(`${kind} ${i}`).toString('hex')
  return `s${hex.slice(0, 8)}.p${hex.slice(8, 20)}`
}

/**
 * The two assets caller i swaps between: it holds the first at the start;
 * each of its changes removes the one it holds and adds the other.
 * @param {number} i
 * @returns {[string, string]}
 */
export function callerAssets (i) {
  return [assetHash((i * 7) % HASHES), assetHash((i * 7 + 3) % HASHES)]
}

/**
 * The data set, as commands: every asset's holders with the times a lookup last
 * chose them (0 = never, else a ms time as the coordinator writes it), and each
 * caller's peer holding the first of its two assets.
 * @param {number} callers
 * @param {number} now ms
 * @returns {[string, ...(string | number)[]][]}
 */
export function seedCommands (callers, now) {
  /** @type {[string, ...(string | number)[]][]} */
  const commands = []
  for (let h = 0; h < HASHES; h++) {
    const fields = []
    for (let f = 0; f < FIELDS_PER_HASH; f++) {
      const n = h * FIELDS_PER_HASH + f
      fields.push(peerId('seed', n), n % 3 === 0 ? 0 : now - (n % 60_000))
    }
    commands.push(['hset', holdersKey(assetHash(h)), ...fields])
  }
  for (let i = 0; i < callers; i++) {
    const id = peerId('caller', i)
    const [held] = callerAssets(i)
    commands.push(['sadd', assetsKey(id), held], ['hsetnx', holdersKey(held), id, 0])
  }
  return commands
}
