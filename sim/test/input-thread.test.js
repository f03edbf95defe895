// The input stage in a worker thread: the engines see the same batches as with the input read here.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../src/config.js'
import { MayghError } from '../../protocol/index.js'
import { feedInput } from '../src/input/input.js'
import { feedInputThreaded } from '../src/input/input-thread.js'
import { runSimulation } from '../src/run/run.js'

const EPA = fileURLToPath(new URL('../../../shared/traces/epa-http.zip', import.meta.url))
const skipTraces = existsSync(EPA) ? false : `shared traces not found at ${EPA}`
const config = resolveConfig({})

/**
 * Every request the sink receives, batch boundaries included.
 * @param {typeof feedInput} feed
 * @param {import('../src/input/input.js').SourceSpec} source
 */
async function collect (feed, source) {
  const sizes = []
  const rows = []
  /** @type {number[]} */
  const fractions = []
  const summary = await feed(source, config, (b) => {
    sizes.push(b.n)
    for (let i = 0; i < b.n; i++) rows.push(`${b.ts[i]} ${b.client[i]} ${b.object[i]} ${b.bytes[i]} ${b.flags[i]}`)
  }, { onProgress: (f) => fractions.push(f) })
  return { sizes, rows, summary, fractions }
}

test('a synthetic trace read in a worker reaches the sink batch for batch as read here', async () => {
  // 800 k requests: more batches than the ring has slots, so the worker waits for the sink
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 800_000, days: 1, seed: 9 } }
  const here = await collect(feedInput, source)
  const there = await collect(feedInputThreaded, source)
  assert.ok(here.sizes.length > 8, `${here.sizes.length} batches`)
  assert.deepEqual(there.sizes, here.sizes)
  assert.deepEqual(there.rows, here.rows)
  assert.deepEqual(there.summary, here.summary)
  assert.ok(there.fractions.length > 0 && there.fractions.every((f) => f >= 0 && f <= 1))
})

test('a whole run with the input in a worker gives the same result', { skip: skipTraces }, async () => {
  for (const source of [{ trace: EPA }, { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 50_000, days: 2, seed: 2 } }]) {
    const { elapsedSeconds: a, ...here } = await runSimulation(source, config)
    const { elapsedSeconds: b, ...there } = await runSimulation(source, config, { inputThread: true })
    assert.deepEqual(there, here)
  }
})

test('input errors in the worker come back as coded MayghErrors', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-input-thread-'))
  try {
    const csv = join(dir, 'bad.csv')
    await writeFile(csv, 'ts_unix,client,status\n1,a,200\n')
    const empty = join(dir, 'empty.log')
    await writeFile(empty, 'not a log line at all\n')
    for (const [source, code] of /** @type {const} */ ([
      [{ trace: join(dir, 'missing.log') }, 'MGH_SIM_ERR_TRACE_OPEN'],
      [{ trace: csv, format: 'csv' }, 'MGH_SIM_ERR_CSV_HEADER'],
      [{ trace: empty, format: 'clf' }, 'MGH_SIM_ERR_EMPTY']
    ])) {
      await assert.rejects(feedInputThreaded(source, config, () => {}), (/** @type {any} */ err) => err instanceof MayghError && err.code === code)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a sink that throws stops the worker and the error comes through', async () => {
  const source = { synthetic: /** @type {'etsy'} */ ('etsy'), generator: { requests: 2_000_000, days: 1, seed: 1 } }
  let batches = 0
  await assert.rejects(feedInputThreaded(source, config, () => {
    if (++batches === 3) throw new Error('engine broke')
  }), /engine broke/)
  assert.equal(batches, 3)
})
