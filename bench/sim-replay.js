#!/usr/bin/env node
/**
 * Replay speed of the simulator's engine on one core, for the synthetic
 * Etsy-like week and for the EPA-HTTP log. Requests are generated or parsed
 * first and kept in memory, so the figure is the replay alone; the input
 * stage's own speed is printed beside it. Best and median of several runs:
 * the replay is bound by memory latency, and on a shared virtual machine
 * that varies from run to run.
 *
 *   node bench/sim-replay.js [--requests N] [--runs N]
 */
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { RequestBatch } from '../sim/src/batch.js'
import { resolveConfig } from '../sim/src/config.js'
import { Engine } from '../sim/src/engine/engine.js'
import { SessionWindow } from '../sim/src/input/session-window.js'
import { EtsyGenerator } from '../sim/src/synthetic/synthetic-etsy.js'
import { TraceReader } from '../sim/src/input/trace-reader.js'
import { percentile } from './stats.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000000' }, runs: { type: 'string', default: '5' } } })
const requests = Number(values.requests)
const runs = Number(values.runs)
const config = resolveConfig({})
const EPA = fileURLToPath(new URL('../../shared/traces/epa-http.zip', import.meta.url))

/**
 * Collects the session window's output batches (copies) in memory.
 * @returns {{ window: SessionWindow, batches: RequestBatch[] }}
 */
function collector () {
  /** @type {RequestBatch[]} */
  const batches = []
  const window = new SessionWindow(config.sessionGap, (b) => {
    const c = new RequestBatch(b.n)
    c.ts.set(b.ts.subarray(0, b.n))
    c.client.set(b.client.subarray(0, b.n))
    c.object.set(b.object.subarray(0, b.n))
    c.bytes.set(b.bytes.subarray(0, b.n))
    c.flags.set(b.flags.subarray(0, b.n))
    c.n = b.n
    batches.push(c)
  })
  return { window, batches }
}

/**
 * Best and median replay times of `batches` through a fresh engine.
 * @param {RequestBatch[]} batches
 * @param {number} times
 * @param {{ adoption?: number }} [options]
 * @returns {{ seconds: number, median: number, n: number }}
 */
function replay (batches, times, options) {
  /** @type {number[]} */
  const seconds = []
  let n = 0
  for (let i = 0; i < times; i++) {
    const engine = new Engine(config, options)
    const t0 = performance.now()
    for (const b of batches) engine.processBatch(b)
    seconds.push((performance.now() - t0) / 1000)
    n = engine.requests
  }
  // the lower median of the times (bench/stats.js), as the figures in docs/simulator.md were printed
  return { seconds: Math.min(...seconds), median: percentile(seconds, 0.5), n }
}

const fmt = (/** @type {number} */ n, /** @type {number} */ s) => `${(n / s / 1e6).toFixed(2)} M req/s (${n.toLocaleString('en-US')} in ${s.toFixed(2)} s)`

console.log(`machine: ${(await import('node:os')).cpus().length} cores, node ${process.version}`)
{
  const { window, batches } = collector()
  const t0 = performance.now()
  const gen = new EtsyGenerator({ requests, seed: 1 })
  let n = 0
  for (const b of gen.batches()) {
    window.push(b)
    n += b.n
  }
  window.flush()
  const genSeconds = (performance.now() - t0) / 1000
  console.log(`synthetic week, generate + session window: ${fmt(n, genSeconds)}`)
  const r = replay(batches, runs)
  console.log(`synthetic week, replay (Maygh engine, best of ${runs}): ${fmt(r.n, r.seconds)}; median ${(r.n / r.median / 1e6).toFixed(2)} M req/s`)
  const p = replay(batches, 1, { adoption: config.pluginAdoption })
  console.log(`synthetic week, replay (plug-in baseline at ${config.pluginAdoption}): ${fmt(p.n, p.seconds)}`)
}
if (existsSync(EPA)) {
  let parseBest = Infinity
  /** @type {RequestBatch[]} */
  let kept = []
  for (let i = 0; i < 5; i++) {
    const { window, batches } = collector()
    const t0 = performance.now()
    const reader = new TraceReader(EPA)
    for await (const b of reader.batches()) window.push(b)
    window.flush()
    const s = (performance.now() - t0) / 1000
    if (i === 0) console.log(`EPA log, read + parse + window, first run: ${fmt(reader.requests, s)}`)
    parseBest = Math.min(parseBest, s)
    kept = batches
  }
  const n = kept.reduce((a, b) => a + b.n, 0)
  console.log(`EPA log, read + parse + window (unzip included, best of 5): ${fmt(n, parseBest)}`)
  const r = replay(kept, 20)
  console.log(`EPA log, replay (Maygh engine, best of 20): ${fmt(r.n, r.seconds)}; median ${(r.n / r.median / 1e6).toFixed(2)} M req/s`)
} else {
  console.log(`EPA log: skipped, ${EPA} not found`)
}
