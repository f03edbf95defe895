/**
 * The Redis clients the benchmark compares (bench/redis-clients.js), each
 * behind one small interface that sends the coordinator's three commands (a
 * lookup, a mark, a change) the way a store built on that client would, and
 * turns the lookup's reply into what RedisStore.sampleHolders works from
 * (peer ids as strings, times as numbers). Every client gets the store's
 * settings where it has them: a 1 s command timeout, no offline queue, no
 * retries behind the caller's back.
 *
 * Only ioredis (5.x, what the store uses) is in package.json; the others are
 * optional, loaded by a dynamic import() of a name held in a variable (so the
 * type check neither needs them nor types them), and a variant whose package
 * is not installed is reported missing, not run (INSTALL_OPTIONAL).
 */
import { readFileSync } from 'node:fs'
import { CHANGE_LUA, MARK_LUA, SAMPLE } from './workload.js'

/** The store's timeout for one command (RedisStore's default timeoutMs). */
const TIMEOUT_MS = 1000

/**
 * How to add the optional clients without touching package.json or
 * package-lock.json (a plain `npm install` removes them again). ioredis 6 goes
 * under the alias ioredis6, beside the ioredis 5 the store uses.
 */
export const INSTALL_OPTIONAL = 'npm install --no-save redis@^6.3.1 iovalkey@^0.4.0 @valkey/valkey-glide@^2.5.2 ioredis6@npm:ioredis@^6'

/** @typedef {{ id: string, lastChosen: number }} Holder */
/**
 * @typedef {object} BenchClient
 * @property {(key: string) => Promise<Holder[]>} lookup HRANDFIELD key SAMPLE WITHVALUES
 * @property {(key: string, id: string, at: number) => Promise<unknown>} mark MARK_LUA on the holder hash
 * @property {(keys: string[], args: (string | number)[]) => Promise<unknown>} change CHANGE_LUA, keys and args as the store sends them
 * @property {() => Promise<void>} close
 */
/**
 * @typedef {object} Variant
 * @property {string} name
 * @property {string} package the npm package (as installed: ioredis6 is an alias) that serves it
 * @property {string | null} library that package's `name@version`, null when it is not installed
 * @property {boolean} optional not in package.json: installed by hand (INSTALL_OPTIONAL)
 * @property {string} what how it uses that library
 * @property {(url: string) => Promise<BenchClient>} open connects
 */

/**
 * @param {string} name a package, installed or not
 * @returns {string | null} `name@version` (`ioredis@6.0.0 as ioredis6` under an alias), null when it is not installed
 */
function packageVersion (name) {
  let text
  try {
    text = readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return null
    throw err
  }
  const { name: real, version } = JSON.parse(text)
  return real === name ? `${name}@${version}` : `${real}@${version} as ${name}`
}

/**
 * An optional package's exports. The name is a parameter, not a literal, so
 * the type check does not try to resolve a package package.json lacks.
 * @param {string} name
 * @returns {Promise<any>}
 */
const importOptional = (name) => import(name)

/**
 * @param {Variant} variant
 * @returns {string | null} why it cannot run here, null when it can
 */
export function missing (variant) {
  return variant.library === null ? `${variant.package} is not installed (optional: ${INSTALL_OPTIONAL})` : null
}

/**
 * A lookup's flat reply [id, time, id, time, …] as holders.
 * @param {string[]} fields
 * @returns {Holder[]}
 */
function holdersOf (fields) {
  /** @type {Holder[]} */
  const holders = []
  for (let i = 0; i < fields.length; i += 2) holders.push({ id: fields[i], lastChosen: Number(fields[i + 1]) })
  return holders
}

/**
 * @param {Buffer} bytes a decimal integer, as Redis stores the times
 * @returns {number} its value, read without making a string
 */
function decimal (bytes) {
  let n = 0
  for (let i = 0; i < bytes.length; i++) {
    const digit = bytes[i] - 48
    // Not a plain non-negative integer: the slow way, with Number's rules.
    if (digit < 0 || digit > 9) return Number(bytes.toString('latin1'))
    n = n * 10 + digit
  }
  return n
}

/**
 * A lookup's flat reply as Buffers: ids decoded as latin1 (they are ASCII), times read from the bytes.
 * @param {Buffer[]} fields
 * @returns {Holder[]}
 */
function holdersOfBuffers (fields) {
  /** @type {Holder[]} */
  const holders = []
  for (let i = 0; i < fields.length; i += 2) holders.push({ id: fields[i].toString('latin1'), lastChosen: decimal(fields[i + 1]) })
  return holders
}

/** ioredis's Redis or iovalkey's: the same constructor, in several packages' types. */
/** @typedef {new (url: string, options: object) => any} IORedisLike */

// Each trial loads only its own client library (a trial process starts sooner, and holds no other's threads).
/** @returns {Promise<IORedisLike>} */
const IORedis = async () => (await import('ioredis')).Redis
/** @returns {Promise<IORedisLike>} */
const IORedis6 = async () => (await importOptional('ioredis6')).Redis
/** @returns {Promise<IORedisLike>} */
const IOValkey = async () => (await importOptional('iovalkey')).Redis

/**
 * An ioredis (or iovalkey, its fork) client configured as RedisStore configures one.
 * @param {() => Promise<IORedisLike>} load its constructor
 * @param {string} url
 * @param {object} options merged over the store's
 * @returns {Promise<any>} the client, connected (typed loosely: its scripts are defined at run time)
 */
async function ioredisClient (load, url, options) {
  const Client = await load()
  const redis = new Client(url, {
    lazyConnect: true,
    commandTimeout: TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
    ...options
  })
  redis.on('error', () => {})
  redis.defineCommand('mghMark', { numberOfKeys: 1, lua: MARK_LUA })
  redis.defineCommand('mghChange', { lua: CHANGE_LUA })
  await redis.connect()
  return redis
}

/**
 * ioredis or iovalkey used as RedisStore uses ioredis: string replies, scripts through defineCommand.
 * @param {() => Promise<IORedisLike>} Client its constructor
 * @param {object} [options]
 * @param {{ buffers?: boolean }} [use] `buffers`: the lookup through hrandfieldBuffer
 * @returns {(url: string) => Promise<BenchClient>}
 */
function storeLike (Client, options = {}, { buffers = false } = {}) {
  return async (url) => {
    const redis = await ioredisClient(Client, url, options)
    return {
      lookup: buffers
        ? async (key) => holdersOfBuffers(await redis.hrandfieldBuffer(key, SAMPLE, 'WITHVALUES'))
        : async (key) => holdersOf(await redis.hrandfield(key, SAMPLE, 'WITHVALUES')),
      mark: (key, id, at) => redis.mghMark(key, id, at),
      change: (keys, args) => redis.mghChange(keys.length, ...keys, ...args),
      close: () => redis.quit().then(() => {})
    }
  }
}

/**
 * ioredis at its thinnest: auto-pipelined, Buffer replies for the lookup, and
 * the scripts as plain EVALSHA (loaded once, sent again as EVAL when Redis
 * answers NOSCRIPT, as after a restart) instead of defineCommand's per-call
 * script command object.
 * @param {() => Promise<IORedisLike>} Client its constructor
 * @param {object} [options] merged over the store's
 * @returns {(url: string) => Promise<BenchClient>}
 */
function thin (Client, options = {}) {
  return async (url) => thinClient(await ioredisClient(Client, url, options))
}

/**
 * @param {any} redis an ioredis client, connected
 * @returns {BenchClient}
 */
function thinClient (redis) {
  /**
   * @param {string} lua
   * @returns {(numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>}
   */
  const script = (lua) => {
    let sha = /** @type {string} */ ('')
    const loaded = redis.script('LOAD', lua).then((/** @type {string} */ s) => { sha = s })
    const call = (/** @type {number} */ numberOfKeys, /** @type {(string | number)[]} */ args) => redis.evalsha(sha, numberOfKeys, ...args).catch((/** @type {Error} */ err) => {
      if (!err.message.startsWith('NOSCRIPT')) throw err
      return redis.eval(lua, numberOfKeys, ...args)
    })
    return (numberOfKeys, ...args) => sha === '' ? loaded.then(() => call(numberOfKeys, args)) : call(numberOfKeys, args)
  }
  const mark = script(MARK_LUA)
  const change = script(CHANGE_LUA)
  return {
    lookup: async (key) => holdersOfBuffers(await redis.hrandfieldBuffer(key, SAMPLE, 'WITHVALUES')),
    mark: (key, id, at) => mark(1, key, id, at),
    change: (keys, args) => change(keys.length, ...keys, ...args),
    close: () => redis.quit().then(() => {})
  }
}

/**
 * node-redis as a store would use it: its typed commands and defineScript
 * scripts (EVALSHA, EVAL on NOSCRIPT), RESP3 (its default); commands issued
 * before its next setImmediate go out in one write.
 * @param {number} timeoutMs each command's timeout, counted from when it is
 *   issued (an AbortSignal.timeout per command); 0 for none (node-redis's default is 5 s)
 * @returns {(url: string) => Promise<BenchClient>}
 */
function nodeRedis (timeoutMs) {
  return (url) => nodeRedisClient(url, timeoutMs)
}

/**
 * @param {string} url
 * @param {number} timeoutMs
 * @returns {Promise<BenchClient>}
 */
async function nodeRedisClient (url, timeoutMs) {
  const { createClient, defineScript } = await importOptional('redis')
  const scripts = {
    mghMark: defineScript({
      SCRIPT: MARK_LUA,
      NUMBER_OF_KEYS: 1,
      parseCommand (/** @type {any} */ parser, /** @type {string} */ key, /** @type {string} */ id, /** @type {number} */ at) {
        parser.pushKey(key)
        parser.push(id, String(at))
      },
      transformReply: () => 0
    }),
    mghChange: defineScript({
      SCRIPT: CHANGE_LUA,
      parseCommand (/** @type {any} */ parser, /** @type {string[]} */ keys, /** @type {(string | number)[]} */ args) {
        parser.pushKeysLength(keys)
        parser.push(...args.map(String))
      },
      transformReply: () => 0
    })
  }
  // Optional, so untyped here; the calls below are checked by running them.
  const client = (createClient({ url, scripts, disableOfflineQueue: true, commandOptions: { timeout: timeoutMs } }))
  client.on('error', () => {})
  await client.connect()
  return {
    lookup: async (key) => {
      const pairs = /** @type {{ field: string, value: string }[]} */ (await client.hRandFieldCountWithValues(key, SAMPLE))
      return pairs.map(({ field, value }) => ({ id: field, lastChosen: Number(value) }))
    },
    mark: (key, id, at) => client.mghMark(key, id, at),
    change: (keys, args) => client.mghChange(keys, args),
    close: () => client.close()
  }
}

/**
 * Valkey GLIDE: a Rust core in this process (its own threads, counted in this
 * process's CPU) that the JS side talks to over a Unix socket in protobuf;
 * scripts through its Script objects (EVALSHA, loaded on NOSCRIPT).
 * @param {string} url
 * @returns {Promise<BenchClient>}
 */
async function glide (url) {
  const { GlideClient, Script: GlideScript } = await importOptional('@valkey/valkey-glide')
  const { hostname, port } = new URL(url)
  const client = await GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], requestTimeout: TIMEOUT_MS })
  const mark = new GlideScript(MARK_LUA)
  const change = new GlideScript(CHANGE_LUA)
  return {
    lookup: async (key) => {
      const pairs = /** @type {[string, string][]} */ (await client.hrandfieldWithValues(key, SAMPLE))
      return pairs.map(([id, at]) => ({ id, lastChosen: Number(at) }))
    },
    mark: (key, id, at) => client.invokeScript(mark, { keys: [key], args: [id, String(at)] }),
    change: (keys, args) => client.invokeScript(change, { keys, args: args.map(String) }),
    close: async () => {
      client.close()
      mark.release()
      change.release()
    }
  }
}

/**
 * @param {string} name
 * @param {string} pkg
 * @param {string} what
 * @param {(url: string) => Promise<BenchClient>} open
 * @returns {Variant}
 */
function variant (name, pkg, what, open) {
  return { name, package: pkg, library: packageVersion(pkg), optional: pkg !== 'ioredis', what, open }
}

/**
 * Every variant, in the order each round runs them; the first, what the store
 * uses, is what the others are compared with. No ioredis-resp2 any more (it
 * was ioredis 6 with protocol: 2): ioredis 5 speaks RESP2 only (it has no
 * `protocol` option and sends no HELLO), so it would be the baseline again;
 * ioredis 6 on RESP2 is what ioredis6-thin measures.
 * @type {Variant[]}
 */
export const VARIANTS = [
  variant('ioredis', 'ioredis',
    'configured as RedisStore configures it: enableAutoPipelining, string replies, defineCommand scripts, commandTimeout (RESP2 through redis-parser, all ioredis 5 speaks)',
    storeLike(IORedis)),
  variant('ioredis-no-autopipelining', 'ioredis',
    'as ioredis, without enableAutoPipelining (each command written as it is issued)',
    storeLike(IORedis, { enableAutoPipelining: false })),
  variant('ioredis-buffers', 'ioredis',
    'as ioredis, the lookup through hrandfieldBuffer (ids decoded as latin1, times read from the bytes)',
    storeLike(IORedis, {}, { buffers: true })),
  variant('ioredis-thin', 'ioredis',
    'enableAutoPipelining, hrandfieldBuffer, scripts as plain EVALSHA (EVAL on NOSCRIPT) instead of defineCommand',
    thin(IORedis)),
  variant('ioredis6', 'ioredis6',
    'ioredis 6 (RESP3, its default, through its own reply decoder), used as the store uses ioredis',
    storeLike(IORedis6)),
  variant('ioredis6-thin', 'ioredis6',
    'ioredis 6 used as ioredis-thin, with protocol: 2 (RESP2, as ioredis 5)',
    thin(IORedis6, { protocol: 2 })),
  variant('node-redis', 'redis',
    'typed commands (hRandFieldCountWithValues), defineScript scripts, RESP3 (its default), commands of one tick written together, 1 s command timeout',
    nodeRedis(TIMEOUT_MS)),
  variant('node-redis-no-timeout', 'redis',
    'as node-redis, without its per-command timeout (an AbortSignal.timeout each; the store bounds every call itself, withDeadline)',
    nodeRedis(0)),
  variant('iovalkey', 'iovalkey',
    'the ioredis 5 fork, used as the store uses ioredis (RESP2 through redis-parser)',
    storeLike(IOValkey)),
  variant('valkey-glide', '@valkey/valkey-glide',
    'GlideClient (Rust core in-process, over a Unix socket in protobuf): hrandfieldWithValues, invokeScript with Script objects, requestTimeout',
    glide)
]
