/**
 * Runs several independent simulations (the main run and every sweep value)
 * on up to `parallel` cores, each in a worker thread of its own that reads or
 * generates its input and replays it. A run's result depends only on its
 * source and config, never on which worker ran it or when, so the output is
 * the same for any `parallel`. With one run, or `parallel` 1, the runs go one
 * after another in this thread, each reading its input in a worker of its own
 * (`inputThread`, on by default when there is a second core) so that reading
 * overlaps replaying.
 *
 * Progress of all runs is added up into one fraction for the progress bar.
 * The first run that fails stops the others; its MayghError is thrown here
 * with its code and message.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { runSimulation } from './run.js'
import { workerResult } from '../worker-protocol.js'

/**
 * @typedef {object} RunJob
 * @property {import('./run.js').SourceSpec} source
 * @property {Readonly<import('../config.js').SimConfig>} config
 * @property {boolean} [plugin] replay the plug-in baseline beside it (default true)
 */

/** Runs at once unless told otherwise: one a core. */
export const DEFAULT_PARALLEL = availableParallelism()

const WORKER_URL = new URL('./run-worker.js', import.meta.url)

/**
 * @param {RunJob[]} jobs
 * @param {{ parallel?: number, inputThread?: boolean, onProgress?: (fraction: number, requests: number, finished: number) => void, onStart?: (index: number) => void }} [options]
 * @returns {Promise<import('./run.js').RunResult[]>} one result a job, in the jobs' order
 */
export async function runJobs (jobs, options = {}) {
  const parallel = Math.max(1, Math.min(options.parallel ?? DEFAULT_PARALLEL, jobs.length))
  const progress = new PooledProgress(jobs.length, options.onProgress)
  if (parallel === 1) return runHere(jobs, progress, options.inputThread ?? DEFAULT_PARALLEL > 1, options.onStart)

  /** @type {import('./run.js').RunResult[]} */
  const results = new Array(jobs.length)
  /** @type {Set<Worker>} */
  const workers = new Set()
  let next = 0
  let failed = false
  /** @param {number} index */
  const runOne = async (index) => {
    options.onStart?.(index)
    const job = jobs[index]
    const worker = new Worker(WORKER_URL, { workerData: { source: job.source, config: { ...job.config }, plugin: job.plugin } })
    workers.add(worker)
    try {
      /** @type {import('./run.js').RunResult} */
      const result = await workerResult(worker, (msg) => progress.set(index, msg.fraction, msg.requests))
      progress.finish(index, result.maygh.requests)
      results[index] = result
    } finally {
      workers.delete(worker)
    }
  }
  /** Takes jobs until none are left or one has failed. */
  const lane = async () => {
    while (!failed && next < jobs.length) {
      const index = next++
      try {
        await runOne(index)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: parallel }, lane))
  } finally {
    await Promise.all([...workers].map((w) => w.terminate()))
  }
  return results
}

/**
 * Runs the jobs one after another in this thread.
 * @param {RunJob[]} jobs
 * @param {PooledProgress} progress
 * @param {boolean} inputThread
 * @param {((index: number) => void) | undefined} onStart
 */
async function runHere (jobs, progress, inputThread, onStart) {
  const results = []
  for (let i = 0; i < jobs.length; i++) {
    onStart?.(i)
    const { source, config, plugin } = jobs[i]
    const result = await runSimulation(source, config, { plugin, inputThread, onProgress: (f, n) => progress.set(i, f, n) })
    progress.finish(i, result.maygh.requests)
    results.push(result)
  }
  return results
}

/** Adds up the progress of several runs: each counts for an equal share. */
class PooledProgress {
  /**
   * @param {number} runs
   * @param {((fraction: number, requests: number, finished: number) => void) | undefined} report
   */
  constructor (runs, report) {
    this.fractions = new Float64Array(runs)
    this.requests = new Float64Array(runs)
    this.report = report
    /** runs that have finished */
    this.finished = 0
  }

  /**
   * @param {number} index
   * @param {number} fraction
   * @param {number} requests
   */
  set (index, fraction, requests) {
    this.fractions[index] = fraction
    this.requests[index] = requests
    if (this.report === undefined) return
    let f = 0
    let n = 0
    for (let i = 0; i < this.fractions.length; i++) {
      f += this.fractions[i]
      n += this.requests[i]
    }
    this.report(f / this.fractions.length, n, this.finished)
  }

  /**
   * @param {number} index
   * @param {number} requests
   */
  finish (index, requests) {
    this.finished++
    this.set(index, 1, requests)
  }
}
