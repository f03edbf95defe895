/**
 * One run of the load generator (coordinator-load.js) for bench:compare, in a
 * process of its own: its JSON line, or why there is none. Its warnings and
 * its servers' errors are passed on to stderr; its progress lines are not.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const LOAD = fileURLToPath(new URL('../coordinator-load.js', import.meta.url))
/** The load generator's progress lines, not passed on. */
const PROGRESS = /^coordinator-load: (phase \d|starting the)/

/** @type {import('node:child_process').ChildProcess | null} the load generator running now */
let running = null

/**
 * One run of the load generator. Never rejects: a run that fails comes back
 * with the last lines of its stderr as `failure`.
 *
 * @param {string[]} args
 * @param {number} timeoutS after which it is stopped (SIGTERM: it stops its servers) and counted as failed
 * @returns {Promise<{ figures: import('./compare-summary.js').Figures | null, failure: string | null }>}
 */
export function runLoad (args, timeoutS) {
  return new Promise((resolve) => {
    const child = running = spawn(process.execPath, [LOAD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    /** @type {string[]} */
    let stderr = []
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (text) => { stdout += text })
    child.stderr.setEncoding('utf8').on('data', (text) => {
      // Its warnings and the servers' errors are passed on, not its progress; the last lines are kept for
      // the report of a failed run (only those: a server that logs every bad request could fill any buffer).
      const lines = text.split('\n').filter((l) => l.trim() !== '' && !PROGRESS.test(l))
      for (const line of lines) process.stderr.write(`  ${line}\n`)
      stderr = [...stderr, ...lines].slice(-3)
    })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGTERM')
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref()
    }, timeoutS * 1000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      running = null
      const why = stderr.join(' | ')
      if (timedOut) return resolve({ figures: null, failure: `stopped after ${timeoutS} s${why === '' ? '' : `: ${why}`}` })
      if (code !== 0) return resolve({ figures: null, failure: `exit ${code ?? signal}${why === '' ? '' : `: ${why}`}` })
      try {
        resolve({ figures: JSON.parse(stdout), failure: null })
      } catch {
        resolve({ figures: null, failure: `no JSON line on stdout: ${stdout.slice(0, 200)}` })
      }
    })
  })
}

/**
 * Stop the run in progress, if any (SIGTERM: the load generator stops its servers first).
 * @returns {Promise<void>} once it has ended
 */
export function stopRunning () {
  const child = running
  if (child === null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('close', () => resolve())
    child.kill('SIGTERM')
  })
}
