/**
 * A crowd run in a process of its own, run again when the Node peers'
 * WebRTC stack crashes it.
 *
 * `@roamhq/wrtc` (the Node peers' RTCPeerConnection) now and then takes the
 * whole process down with a SIGSEGV: its `RTCDataChannel.send` can race a
 * remote close that frees the channel on WebRTC's signalling thread
 * (docs/swarm.md, "When the crowd crashes"). Browsers do not share that
 * code, and the client cannot avoid a peer closing while it sends, so the
 * crowd is run where a crash costs a rerun, not the caller's process: a
 * child process, in a process group of its own so that its Redis servers and
 * browsers go with it. A run that ends any other way (its result, or an
 * error) is final.
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('./crowd-child.js', import.meta.url))
/** how a native crash ends a process */
const CRASHES = new Set(['SIGSEGV', 'SIGBUS', 'SIGABRT', 'SIGILL'])

/**
 * @typedef {import('./crowd.js').CrowdResult & { crashes: string[] }} IsolatedResult
 *   `crashes`: how each earlier attempt of this run ended (`SIGSEGV`, …): none, usually
 */

/**
 * Run the crowd in a child process.
 * @param {import('./crowd.js').CrowdOptions} options as runCrowd takes them (`log` lines come back from the child)
 * @param {{ attempts?: number, child?: string }} [how] `attempts`: runs started at most when each crashes (default 3);
 *   `child`: the module the child runs (crowd-child.js; a test gives its own)
 * @returns {Promise<IsolatedResult>}
 */
export async function runCrowdApart (options, { attempts = 3, child = CHILD } = {}) {
  const { log, ...rest } = options
  /** @type {string[]} */
  const crashes = []
  for (;;) {
    const ended = await attempt(child, rest, log)
    if ('result' in ended) return { ...ended.result, crashes }
    crashes.push(ended.signal)
    if (crashes.length >= attempts) {
      throw Object.assign(new Error(`the crowd's process crashed ${crashes.length} times (${crashes.join(', ')}): see docs/swarm.md, "When the crowd crashes"`), { code: 'MGH_SWARM_ERR_CRASHED' })
    }
    log?.(`the crowd's process crashed (${ended.signal}, in the Node peers' WebRTC stack): running it again`)
  }
}

/**
 * One child, one run.
 * @param {string} module
 * @param {Omit<import('./crowd.js').CrowdOptions, 'log'>} options
 * @param {((line: string) => void) | undefined} log
 * @returns {Promise<{ result: import('./crowd.js').CrowdResult } | { signal: string }>}
 */
function attempt (module, options, log) {
  return new Promise((resolve, reject) => {
    const child = fork(module, [], { serialization: 'advanced', detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    /** @type {any} */
    let outcome = null
    child.on('message', (/** @type {any} */ m) => {
      if ('log' in m) log?.(m.log)
      else outcome = m
    })
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      // Whatever it started (Redis, browsers) shares its process group.
      try { process.kill(-Number(child.pid), 'SIGKILL') } catch {}
      if (outcome?.result) resolve({ result: outcome.result })
      else if (outcome?.error) reject(Object.assign(new Error(outcome.error.message), outcome.error))
      else if (signal && CRASHES.has(signal)) resolve({ signal })
      else reject(new Error(`the crowd's process ended without a result (exit code ${code}, signal ${signal})`))
    })
    child.send({ options, log: Boolean(log) })
  })
}
