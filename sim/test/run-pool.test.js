// Several runs at once in worker threads: the same results as one after another, errors keep their codes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { IDEALISED, resolveConfig } from '../src/config.js'
import { MayghError } from '../../protocol/index.js'
import { runJobs } from '../src/run/run-pool.js'
import { parseSweep, sweepJobs, sweepTable } from '../src/run/sweep.js'

const SOURCE = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 30_000, days: 1, seed: 5 } }

/**
 * A result without its wall time, which is the one thing allowed to differ.
 * @param {import('../src/run/run.js').RunResult} r
 */
const comparable = ({ elapsedSeconds, ...rest }) => rest

test('runs in workers give exactly the results of runs in this thread, in the jobs\' order', async () => {
  // the idealised client, whose savings grow with linger (checked at the end)
  const base = resolveConfig(IDEALISED)
  const spec = parseSweep('linger=0,300,1800')
  const jobs = [{ source: SOURCE, config: base }, ...sweepJobs(SOURCE, base, spec)]
  /** @type {number[]} */
  const fractions = []
  const started = /** @type {number[]} */ ([])
  const here = await runJobs(jobs, { parallel: 1 })
  const pooled = await runJobs(jobs, { parallel: 2, onProgress: (f) => fractions.push(f), onStart: (i) => started.push(i) })
  assert.equal(pooled.length, 4)
  assert.deepEqual(pooled.map(comparable), here.map(comparable))
  assert.deepEqual(started, [0, 1, 2, 3])
  assert.equal(fractions.at(-1), 1)
  assert.ok(fractions.every((f) => f >= 0 && f <= 1))
  // the main run has the plug-in baseline; sweep runs do not
  assert.notEqual(pooled[0].plugin, null)
  assert.equal(pooled[1].plugin, null)
  const table = sweepTable(spec, pooled.slice(1))
  assert.deepEqual(table.rows.map((r) => r.value), [0, 300, 1800])
  assert.ok(table.rows[0].savings <= table.rows[2].savings)
})

test('a run that fails in a worker throws its MayghError here, code and message intact', async () => {
  const config = resolveConfig({})
  const missing = { trace: '/nonexistent/access.log' }
  await assert.rejects(
    runJobs([{ source: SOURCE, config }, { source: missing, config }, { source: missing, config }], { parallel: 2 }),
    (/** @type {any} */ err) => err instanceof MayghError && err.code === 'MGH_SIM_ERR_TRACE_OPEN' && /\/nonexistent\/access\.log/.test(err.message)
  )
})

test('a sweep value out of range fails before any run starts', () => {
  assert.throws(() => sweepJobs(SOURCE, resolveConfig({}), parseSweep('fail-rate=0,2')), { code: 'MGH_SIM_ERR_BAD_VALUE' })
})
