/**
 * The hot store calls of a coordinator on one Redis — a lookup's sample, its
 * mark, a peer's join, change and leave — gathered from every client over one
 * turn of the event loop and sent as one script call, which runs them in the
 * order they were made and answers each.
 *
 * One command per turn instead of one to three per request: ioredis builds a
 * Command, a promise and a parser state per command (a third of the
 * coordinator's CPU on Redis), and Redis dispatches each one it is sent.
 * ioredis's auto-pipelining groups the commands of one tick, which is one
 * client's frame; this groups those of every frame read in one turn (they are
 * handled one after another, then `setImmediate` sends what they asked), at
 * the cost of that turn's wait. A lookup's mark rides with the lookups after
 * it, so the next lookup still sees it.
 *
 * One Redis only: the script reaches keys it is not given as KEYS, which a
 * Cluster forbids (its keys are on many nodes); there every call stays a
 * command of its own. Each operation's commands run through `redis.pcall`,
 * so one that fails fails alone (a change that fails part way carries on
 * with the rest of its hashes, as the commands of a pipeline would).
 */

/**
 * ARGV: operations one after another, each its code, its argument count, its arguments:
 *   s key limit                       → HRANDFIELD key limit WITHVALUES
 *   m key id at                       → sets id's time in key if id is still there; 0
 *   c set id removals key… hash…      → a peer's change: the first `removals` hashes leave set
 *                                       and their key, the others join; 0
 *   j shardSet id                     → SADD shardSet id (a join, with a `c` for what it holds)
 *   l shardSet id set                 → SREM shardSet id, DEL set (a leave, after its `c`)
 * Returns one reply per operation (an error reply for one that failed).
 */
const BATCH_LUA = `
local out, n = {}, 0
local pcall = redis.pcall
local function failed (r)
  return type(r) == 'table' and r.err ~= nil
end
local i = 1
while i <= #ARGV do
  local op, count, a = ARGV[i], tonumber(ARGV[i + 1]), i + 2
  local reply = 0
  if op == 's' then
    reply = pcall('HRANDFIELD', ARGV[a], ARGV[a + 1], 'WITHVALUES')
  elseif op == 'm' then
    reply = pcall('HEXISTS', ARGV[a], ARGV[a + 1])
    if reply == 1 then reply = pcall('HSET', ARGV[a], ARGV[a + 1], ARGV[a + 2]) end
    if not failed(reply) then reply = 0 end
  elseif op == 'c' then
    local set, id, removals, hashes = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), (count - 3) / 2
    for k = 0, hashes - 1 do
      local key, hash = ARGV[a + 3 + k], ARGV[a + 3 + hashes + k]
      local r1, r2
      if k < removals then
        r1, r2 = pcall('SREM', set, hash), pcall('HDEL', key, id)
      else
        r1, r2 = pcall('SADD', set, hash), pcall('HSETNX', key, id, 0)
      end
      if failed(r1) then reply = r1 elseif failed(r2) then reply = r2 end
    end
  elseif op == 'j' then
    reply = pcall('SADD', ARGV[a], ARGV[a + 1])
  elseif op == 'l' then
    reply = pcall('SREM', ARGV[a], ARGV[a + 1])
    if not failed(reply) then reply = pcall('DEL', ARGV[a + 2]) end
  else
    reply = { err = 'unknown operation ' .. tostring(op) }
  end
  n = n + 1
  out[n] = reply
  i = a + count
end
return out`

/** @typedef {(string | number)[]} Operation its code, its argument count, its arguments (BATCH_LUA) */

/**
 * Arguments a script call carries at most: past them, what has been asked
 * goes at once and a new call starts (10,000 clients joining in one turn
 * would otherwise hold Redis in one script for as long as all of their work takes).
 */
export const MAX_BATCH_ARGS = 4096

export class RedisBatch {
  /**
   * @param {import('ioredis').Redis} redis one Redis (not a Cluster)
   * @param {() => void} onSend called once per script call sent (the store counts its round trips)
   */
  constructor (redis, onSend) {
    redis.defineCommand('mghBatch', { numberOfKeys: 0, lua: BATCH_LUA })
    this.redis = /** @type {import('ioredis').Redis & { mghBatch: (args: (string | number)[]) => Promise<unknown[]> }} */ (redis)
    this.onSend = onSend
    /** @type {(string | number)[]} the operations asked for this turn, flat */
    this.args = []
    /** @type {{ resolve: (replies: unknown[]) => void, reject: (err: Error) => void, count: number }[]} each caller, and how many operations are its */
    this.waiters = []
    this.scheduled = false
    this.send = () => this.#send()
  }

  /**
   * Ask for `operations` in this turn's script call.
   * @param {Operation[]} operations
   * @returns {Promise<unknown[]>} their replies in order; rejects with the first that failed
   */
  run (...operations) {
    for (const op of operations) for (const a of op) this.args.push(a)
    const reply = new Promise((resolve, reject) => this.waiters.push({ resolve, reject, count: operations.length }))
    if (this.args.length >= MAX_BATCH_ARGS) {
      this.#send()
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.send)
    }
    return /** @type {Promise<unknown[]>} */ (reply)
  }

  #send () {
    this.scheduled = false
    const args = this.args
    const waiters = this.waiters
    if (waiters.length === 0) return
    this.args = []
    this.waiters = []
    this.onSend()
    // One array, not spread: a call's arguments would overflow the stack long before Redis minds.
    this.redis.mghBatch(args).then((replies) => answer(waiters, replies), (err) => {
      for (const { reject } of waiters) reject(err)
    })
  }
}

/**
 * Hand each caller its operations' replies, or the first of them that failed.
 * @param {{ resolve: (replies: unknown[]) => void, reject: (err: Error) => void, count: number }[]} waiters
 * @param {unknown} replies the script's
 */
function answer (waiters, replies) {
  const total = waiters.reduce((n, w) => n + w.count, 0)
  if (!Array.isArray(replies) || replies.length !== total) {
    const err = new Error(`the store's batch answered ${Array.isArray(replies) ? replies.length : typeof replies} for ${total} operations`)
    for (const { reject } of waiters) reject(err)
    return
  }
  let at = 0
  for (const { resolve, reject, count } of waiters) {
    const mine = replies.slice(at, at + count)
    at += count
    const failed = mine.find((r) => r instanceof Error)
    if (failed === undefined) resolve(mine)
    else reject(/** @type {Error} */ (failed))
  }
}
