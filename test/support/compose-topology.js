/**
 * Runs a docker-compose topology as local processes, without a container
 * engine: each service's own command, environment and health check, in the
 * order its `depends_on` conditions allow, as children of the test process.
 *
 * - Services built from this repository (`build:`) run the Dockerfile's final
 *   stage: its CMD unless compose gives `command`, its HEALTHCHECK unless compose
 *   gives one, its ENV under compose's `environment`, with the repository root as
 *   the working directory (the image's WORKDIR holds the same tree). `node` is
 *   this Node. Other images (redis:7) run their compose `command` from PATH in a
 *   fresh temporary directory (their data directory); their image defaults and
 *   entrypoints are not known here, so compose must spell the command out.
 * - Host names and ports are translated by compose-addresses.js (one rule,
 *   documented there): services on 127.0.0.1, each container port on a free
 *   local port.
 * - A process starts with only PATH and the service's environment, as in a container.
 * - `service_started`: spawned; `service_healthy`: its health check exited 0
 *   (polled every 100 ms: compose's interval and retries are for production);
 *   `service_completed_successfully`: exited 0. `scale: 0` services are not
 *   started and count as all three, as docker-compose 1.29 does. Restart
 *   policies are ignored: a long-running service that exits fails the start.
 *
 * {@link startComposeTopology} is generic; {@link startMayghCompose} runs this
 * repository's docker-compose.yml and names the coordinators and the demo shop.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { allocateLocalPorts, addressTranslator } from './compose-addresses.js'
import { loadCompose, readDockerfile } from './compose-files.js'

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** Entry points of this repository's programs, as a service's command names them. */
export const PROGRAMS = Object.freeze({ coordinator: 'coordinator/bin/maygh-coordinator.js', demo: 'demo-site/bin/maygh-demo.js' })
const LOG_LIMIT = 64 * 1024
const STOP_GRACE_MS = 5000

/**
 * @typedef {object} ServicePlan what one service runs locally, translated
 * @property {string} name
 * @property {string[]} argv
 * @property {Record<string, string>} env
 * @property {string[] | undefined} healthcheck
 * @property {Record<string, string[]>} dependsOn condition → services
 * @property {import('./compose-addresses.js').LocalPort[]} ports
 * @property {number} scale
 * @property {boolean} builtHere
 */

/**
 * @typedef {object} ComposeTopology
 * @property {Record<string, ServicePlan>} plans
 * @property {(service: string, value: string) => string} translate the address rule, for a service's values
 * @property {(service: string, containerPort: number) => number} port the local port of a container port
 * @property {(service: string) => string} logs a service's output so far (last 64 KiB)
 * @property {() => Promise<Record<string, { code: number | null, signal: string | null }>>} close stops every
 *   process, dependents first (SIGTERM, then SIGKILL after 5 s), and resolves with how each exited
 */

/**
 * @param {{ root?: string, files?: string[], env?: Record<string, string>, healthTimeoutMs?: number }} [options]
 *   `files` relative to `root`; `env` feeds compose's `${…}` (default: none, so the file's defaults apply)
 * @returns {Promise<ComposeTopology>}
 */
export async function startComposeTopology ({ root = REPO_ROOT, files = ['docker-compose.yml'], env = {}, healthTimeoutMs = 60000 } = {}) {
  const services = await loadCompose(files.map((f) => join(root, f)), { env })
  const image = Object.values(services).some((s) => s.build !== undefined) ? await readDockerfile(join(root, 'Dockerfile')) : undefined
  const ports = await allocateLocalPorts(services)
  const translate = addressTranslator(ports)
  /** @type {Record<string, ServicePlan>} */
  const plans = Object.fromEntries(Object.entries(services).map(([name, s]) => [name, planService(name, s, image, ports[name], translate)]))
  checkAcyclic(plans)

  /** @type {Map<string, Running>} */
  const running = new Map()
  const gates = Object.fromEntries(Object.keys(plans).map((name) => [name, { started: deferred(), healthy: deferred(), completed: deferred() }]))
  const killAll = () => { for (const r of running.values()) r.child.kill('SIGKILL') }
  process.once('exit', killAll)
  let closing
  /** @type {ComposeTopology} */
  const topology = {
    plans,
    translate,
    port (service, containerPort) {
      const local = plans[service]?.ports.find((p) => p.target === containerPort)?.local
      if (local === undefined) throw new Error(`service ${service} has no container port ${containerPort}`)
      return local
    },
    logs: (service) => running.get(service)?.log.join('') ?? '',
    close () {
      closing ??= stopAll(plans, running).finally(() => process.off('exit', killAll))
      return closing
    }
  }

  let aborted = false
  const tasks = Object.values(plans).map(async (plan) => {
    const gate = gates[plan.name]
    if (plan.scale === 0) {
      for (const g of Object.values(gate)) g.resolve()
      return
    }
    for (const [condition, names] of Object.entries(plan.dependsOn)) {
      await Promise.all(names.map((n) => gates[n][conditionGate(condition)].promise))
    }
    if (aborted) return
    const r = await launch(plan, root)
    running.set(plan.name, r)
    gate.started.resolve()
    r.exited.then(({ code }) => {
      const failure = new Error(`service ${plan.name} exited with ${code}\n${tail(r)}`)
      if (code === 0) gate.completed.resolve()
      else gate.completed.reject(failure)
      gate.healthy.reject(failure)
    })
    if (plan.healthcheck !== undefined) {
      await waitHealthy(plan, r, root, healthTimeoutMs, () => aborted)
      gate.healthy.resolve()
    }
    // Up means: long-running services healthy (or started), one-shots done.
    const oneShot = Object.values(plans).some((p) => p.dependsOn.service_completed_successfully?.includes(plan.name))
    if (oneShot) await gate.completed.promise
  })
  try {
    await Promise.all(tasks)
  } catch (err) {
    // Let every other service's start finish or give up before stopping them all.
    aborted = true
    for (const gate of Object.values(gates)) for (const g of Object.values(gate)) g.reject(err)
    await Promise.allSettled(tasks)
    await topology.close()
    throw err
  }
  return topology
}

/**
 * @typedef {object} Running
 * @property {import('node:child_process').ChildProcess} child
 * @property {string[]} log
 * @property {Promise<{ code: number | null, signal: string | null }>} exited
 * @property {string | undefined} tmp
 */

/**
 * @param {string} name
 * @param {import('./compose-files.js').ComposeService} service
 * @param {import('./compose-files.js').Dockerfile | undefined} image
 * @param {import('./compose-addresses.js').LocalPort[]} ports
 * @param {(service: string, value: string) => string} translate
 * @returns {ServicePlan}
 */
function planService (name, service, image, ports, translate) {
  const builtHere = service.build !== undefined
  if (builtHere && image?.entrypoint !== undefined) throw new Error('a Dockerfile ENTRYPOINT is not supported here')
  const command = service.command ?? (builtHere ? image?.cmd : undefined)
  if (command === undefined) throw new Error(`service ${name}: no command (give one in compose: image defaults are not known here)`)
  const given = service.healthcheck ?? (builtHere ? image?.healthcheck : undefined)
  const healthcheck = given?.[0] === 'NONE' ? undefined : given
  const env = { ...(builtHere ? image?.env : {}), ...service.environment }
  const local = (/** @type {string[]} */ args) => args.map((a) => translate(name, a)).map((a, i) => i === 0 && a === 'node' ? process.execPath : a)
  /** @type {Record<string, string[]>} */
  const dependsOn = {}
  for (const [dep, { condition }] of Object.entries(service.depends_on)) (dependsOn[condition] ??= []).push(dep)
  return {
    name,
    argv: local(command),
    env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, translate(name, v)])),
    healthcheck: healthcheck === undefined ? undefined : [healthcheck[0], ...local(healthcheck.slice(1))],
    dependsOn,
    ports,
    scale: service.scale,
    builtHere
  }
}

/**
 * @param {string} condition
 * @returns {'started' | 'healthy' | 'completed'}
 */
function conditionGate (condition) {
  if (condition === 'service_healthy') return 'healthy'
  if (condition === 'service_completed_successfully') return 'completed'
  return 'started'
}

/**
 * @param {Record<string, ServicePlan>} plans
 */
function checkAcyclic (plans) {
  const state = new Map()
  const visit = (/** @type {string} */ name, /** @type {string[]} */ path) => {
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') throw new Error(`depends_on cycle: ${[...path, name].join(' → ')}`)
    state.set(name, 'visiting')
    for (const dep of Object.values(plans[name].dependsOn).flat()) visit(dep, [...path, name])
    state.set(name, 'done')
  }
  for (const name of Object.keys(plans)) visit(name, [])
  for (const plan of Object.values(plans)) {
    for (const dep of plan.dependsOn.service_healthy ?? []) {
      const target = plans[dep]
      if (target.scale > 0 && target.healthcheck === undefined) throw new Error(`service ${plan.name} waits for ${dep} to be healthy, but ${dep} has no health check`)
    }
  }
}

/**
 * @param {ServicePlan} plan
 * @param {string} root
 * @returns {Promise<Running>}
 */
async function launch (plan, root) {
  const tmp = plan.builtHere ? undefined : await mkdtemp(join(tmpdir(), `maygh-${plan.name}-`))
  const child = spawn(plan.argv[0], plan.argv.slice(1), { cwd: tmp ?? root, env: { PATH: process.env.PATH, ...plan.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  /** @type {string[]} */
  const log = []
  let size = 0
  const keep = (/** @type {Buffer} */ chunk) => {
    log.push(chunk.toString())
    size += chunk.length
    while (size > LOG_LIMIT && log.length > 1) size -= /** @type {string} */ (log.shift()).length
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise((resolve) => {
    child.once('error', (err) => { keep(Buffer.from(`cannot start ${plan.argv[0]}: ${err.message}\n`)); resolve({ code: -1, signal: null }) })
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  return { child, log, exited: /** @type {Running['exited']} */ (exited), tmp }
}

/**
 * Run the health check until it exits 0; fail when the service exits first or time runs out.
 * @param {ServicePlan} plan
 * @param {Running} r
 * @param {string} root
 * @param {number} timeoutMs
 * @param {() => boolean} aborted whether the topology's start has failed elsewhere
 */
async function waitHealthy (plan, r, root, timeoutMs, aborted) {
  const [kind, ...args] = /** @type {string[]} */ (plan.healthcheck)
  const argv = kind === 'CMD-SHELL' ? ['sh', '-c', ...args] : args
  const deadline = Date.now() + timeoutMs
  const state = { gone: false } // set by the exit listener while the loop awaits
  r.exited.then(() => { state.gone = true })
  while (!state.gone && !aborted()) {
    const probe = spawn(argv[0], argv.slice(1), { cwd: r.tmp ?? root, env: { PATH: process.env.PATH, ...plan.env }, stdio: 'ignore', timeout: 5000 })
    const code = await new Promise((resolve) => {
      probe.once('error', () => resolve(-1))
      probe.once('exit', resolve)
    })
    if (code === 0) return
    if (Date.now() > deadline) throw new Error(`service ${plan.name} not healthy after ${timeoutMs} ms\n${tail(r)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(state.gone ? `service ${plan.name} exited before it was healthy\n${tail(r)}` : 'start aborted')
}

/**
 * @param {Running} r
 * @returns {string} the end of a service's output, for error messages
 */
function tail (r) {
  return r.log.join('').slice(-4000)
}

/**
 * Stop in waves, dependents before what they depend on, so coordinators can
 * still reach Redis while they shut down.
 * @param {Record<string, ServicePlan>} plans
 * @param {Map<string, Running>} running
 */
async function stopAll (plans, running) {
  /** @type {Record<string, { code: number | null, signal: string | null }>} */
  const exits = {}
  const remaining = new Set(running.keys())
  while (remaining.size > 0) {
    const wave = [...remaining].filter((name) => ![...remaining].some((other) => Object.values(plans[other].dependsOn).flat().includes(name)))
    await Promise.all(wave.map(async (name) => {
      const r = /** @type {Running} */ (running.get(name))
      r.child.kill('SIGTERM')
      const timer = setTimeout(() => r.child.kill('SIGKILL'), STOP_GRACE_MS)
      exits[name] = await r.exited
      clearTimeout(timer)
      if (r.tmp !== undefined) await rm(r.tmp, { recursive: true, force: true })
      remaining.delete(name)
    }))
  }
  return exits
}

/**
 * @returns {{ promise: Promise<void>, resolve: () => void, reject: (err: Error) => void }}
 */
function deferred () {
  /** @type {() => void} */
  let resolve = () => {}
  /** @type {(err: Error) => void} */
  let reject = () => {}
  const promise = new Promise((_resolve, _reject) => { resolve = () => _resolve(undefined); reject = _reject })
  promise.catch(() => {}) // a gate nobody waits on must not be an unhandled rejection
  return { promise, resolve, reject }
}

/**
 * @typedef {object} MayghCompose
 * @property {ComposeTopology} topology
 * @property {{ service: string, shardId: string, url: string, httpUrl: string, stunUrl: string }[]} coordinators
 *   every service that runs the coordinator, in service-name order
 * @property {string} demoUrl the shop, as a browser opens it
 * @property {ComposeTopology['close']} close
 */

/**
 * This repository's docker-compose.yml (plus overrides) as local processes.
 * @param {{ files?: string[], healthTimeoutMs?: number }} [options]
 * @returns {Promise<MayghCompose>}
 */
export async function startMayghCompose (options = {}) {
  const topology = await startComposeTopology(options)
  const runs = (/** @type {ServicePlan} */ p, /** @type {string} */ program) => p.scale > 0 && p.argv.includes(program)
  for (const p of Object.values(topology.plans)) {
    if ((runs(p, PROGRAMS.coordinator) || runs(p, PROGRAMS.demo)) && !/^\d+$/.test(p.env.PORT ?? '')) {
      await topology.close()
      throw new Error(`service ${p.name}: give PORT in docker-compose.yml (the test reaches it there)`)
    }
  }
  const coordinators = Object.values(topology.plans).filter((p) => runs(p, PROGRAMS.coordinator)).sort((a, b) => a.name.localeCompare(b.name)).map((p) => ({
    service: p.name,
    shardId: p.env.SHARD_ID,
    url: `ws://127.0.0.1:${p.env.PORT}`,
    httpUrl: `http://127.0.0.1:${p.env.PORT}`,
    stunUrl: `stun:127.0.0.1:${p.env.STUN_PORT}`
  }))
  const demo = Object.values(topology.plans).find((p) => runs(p, PROGRAMS.demo))
  if (demo === undefined || coordinators.length === 0) {
    await topology.close()
    throw new Error('docker-compose.yml runs no coordinator or no demo shop')
  }
  return { topology, coordinators, demoUrl: `http://127.0.0.1:${demo.env.PORT}`, close: topology.close }
}
