/**
 * Coordinators as processes of their own (coordinator/bin/maygh-coordinator.js),
 * for the tests that SIGKILL, drain or restart one shard while browsers use the
 * others. Each keeps the port it was first given, so a restart comes back on the
 * same URL (which is also its PUBLIC_URL, the `alternates` entry browsers get);
 * a run is up when its `listening` log line has come and `/readyz` answers 200.
 * Every process is a child of the test process and is SIGKILLed when that exits.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { PROGRAMS, REPO_ROOT } from './compose-topology.js'
import { freePort } from './redis-server.js'

const LOG_LIMIT = 64 * 1024
const START_TIMEOUT_MS = 15000

/** @type {Set<import('node:child_process').ChildProcess>} every run still alive, killed if the test process exits first */
const alive = new Set()
process.once('exit', () => { for (const child of alive) child.kill('SIGKILL') })

/** @typedef {{ code: number | null, signal: NodeJS.Signals | null }} Exit */

export class CoordinatorProcess {
  /**
   * Pick a free port and start a coordinator on it.
   * @param {{ name: string, redisUrl: string, env?: Record<string, string> }} options
   *   `name` becomes SHARD_ID; `env` adds or overrides environment variables (DRAIN_WINDOW_MS, …)
   * @returns {Promise<CoordinatorProcess>}
   */
  static async start (options) {
    const coordinator = new CoordinatorProcess({ ...options, port: await freePort() })
    await coordinator.start()
    return coordinator
  }

  /**
   * @param {{ name: string, redisUrl: string, port: number, env?: Record<string, string> }} options
   */
  constructor ({ name, redisUrl, port, env = {} }) {
    this.name = name
    this.port = port
    this.url = `ws://127.0.0.1:${port}`
    this.httpUrl = `http://127.0.0.1:${port}`
    /** the environment of every run: the settings README "Configuration" names, nothing inherited but PATH */
    this.env = {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      STUN_PORT: '0',
      PUBLIC_URL: this.url,
      SHARD_ID: name,
      REDIS_URL: redisUrl,
      ...env
    }
    /** @type {import('node:child_process').ChildProcess | null} the current (or last) run */
    this.child = null
    /** @type {Promise<Exit>} how the current run ended */
    this.exited = Promise.resolve({ code: null, signal: null })
    /** this run's shard id (SHARD_ID plus the random suffix every start adds), from its `listening` line */
    this.shard = ''
    /** @type {string[]} output of every run so far (the last 64 KiB) */
    this.log = []
    this.logSize = 0
  }

  /** Whether the current run is still alive. */
  get running () {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null
  }

  /**
   * Start a run (again, on the same port); resolves once it listens and `/readyz` answers 200.
   * @returns {Promise<void>}
   */
  async start () {
    if (this.running) throw new Error(`${this.name} is already running`)
    const child = spawn(process.execPath, [join(REPO_ROOT, PROGRAMS.coordinator)], { cwd: REPO_ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    alive.add(child)
    /** @type {{ shard?: string, gone?: Exit }} set by the listeners below while start() waits */
    const seen = {}
    let pending = ''
    child.stdout?.on('data', (chunk) => {
      this.keep(chunk)
      pending += chunk
      const lines = pending.split('\n')
      pending = /** @type {string} */ (lines.pop())
      for (const line of lines) {
        try {
          const entry = JSON.parse(line)
          if (entry.msg === 'listening' && typeof entry.shard === 'string') seen.shard = entry.shard
        } catch {}
      }
    })
    child.stderr?.on('data', (chunk) => this.keep(chunk))
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => { this.keep(`cannot start: ${err.message}\n`); seen.gone = { code: -1, signal: null }; resolve(seen.gone) })
      child.once('exit', (code, signal) => { alive.delete(child); seen.gone = { code, signal }; resolve(seen.gone) })
    })
    const deadline = Date.now() + START_TIMEOUT_MS
    while (seen.shard === undefined || !(await this.ready())) {
      if (seen.gone !== undefined) throw new Error(`${this.name} exited (${JSON.stringify(seen.gone)}) before it was ready\n${this.logs().slice(-4000)}`)
      if (Date.now() > deadline) throw new Error(`${this.name} not ready after ${START_TIMEOUT_MS} ms\n${this.logs().slice(-4000)}`)
      await sleep(50)
    }
    this.shard = seen.shard
  }

  /** @returns {Promise<boolean>} whether `/readyz` answers 200 */
  async ready () {
    try {
      return (await fetch(`${this.httpUrl}/readyz`)).status === 200
    } catch {
      return false
    }
  }

  /** @returns {Promise<any>} its `/stats` */
  async stats () {
    return (await fetch(`${this.httpUrl}/stats`)).json()
  }

  /**
   * Send `signal` to the current run and wait until it has exited (at once if it has).
   * SIGTERM drains (DRAIN_WINDOW_MS) before the process exits; SIGKILL is a crash.
   * @param {NodeJS.Signals} [signal]
   * @returns {Promise<Exit>}
   */
  async stop (signal = 'SIGKILL') {
    if (this.running) this.child?.kill(signal)
    return this.exited
  }

  /** @param {Buffer | string} chunk */
  keep (chunk) {
    const text = String(chunk)
    this.log.push(text)
    this.logSize += text.length
    while (this.logSize > LOG_LIMIT && this.log.length > 1) this.logSize -= /** @type {string} */ (this.log.shift()).length
  }

  /** @returns {string} what its runs printed (JSON log lines), the last 64 KiB */
  logs () {
    return this.log.join('')
  }
}
