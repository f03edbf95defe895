// --sort's sorter against a plain reference (a stable Array sort, ids renumbered by first
// appearance), in memory and through runs on disk; its temporary files go away; disk failures are coded.
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { RequestBatch } from '../src/batch.js'
import { RequestSorter, SORT_BYTES_PER_REQUEST } from '../src/input/sort-requests.js'

/** @typedef {[number, number, number, number, number]} Req ts, client, object, bytes, flags */

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'maygh-sim-sort-test-')) })
after(async () => { await rm(dir, { recursive: true, force: true }) })

/**
 * The reference: a stable sort by time, then ids numbered by first appearance.
 * @param {Req[]} reqs
 * @returns {Req[]}
 */
function reference (reqs) {
  const sorted = reqs.map((r, i) => ({ r, i })).sort((a, b) => a.r[0] - b.r[0] || a.i - b.i).map(({ r }) => r)
  const clients = new Map()
  const objects = new Map()
  return sorted.map(([t, c, o, bytes, flags]) => {
    if (!clients.has(c)) clients.set(c, clients.size)
    if (!objects.has(o)) objects.set(o, objects.size)
    return [t, clients.get(c), objects.get(o), bytes, flags]
  })
}

/**
 * Runs the sorter over `reqs` fed in batches of `batchSize`.
 * @param {Req[]} reqs
 * @param {{ memoryBytes: number, tmpRoot?: string }} options
 * @param {number} batchSize
 * @returns {Promise<{ out: Req[], sorter: RequestSorter }>}
 */
async function sortAll (reqs, options, batchSize) {
  async function * batches () {
    for (let at = 0; at < reqs.length; at += batchSize) {
      const b = new RequestBatch(batchSize)
      for (const r of reqs.slice(at, at + batchSize)) b.push(...r)
      yield b
    }
  }
  const sorter = new RequestSorter({ tmpRoot: dir, ...options })
  /** @type {Req[]} */
  const out = []
  for await (const b of sorter.sorted(batches())) {
    for (let i = 0; i < b.n; i++) out.push([b.ts[i], b.client[i], b.object[i], b.bytes[i], b.flags[i]])
  }
  return { out, sorter }
}

// few distinct times, so ties are common and stability matters
const request = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 1 }))

test('sorting in memory or through runs on disk gives the reference order, ids renumbered', async () => {
  let onDisk = 0
  await fc.assert(fc.asyncProperty(
    fc.array(request, { maxLength: 5000, size: 'max' }), // 'max': lengths up to 5000, so most cases need several runs
    fc.constantFrom(1024, 1500, 1 << 20), // requests a run holds: several runs, or all in memory
    fc.integer({ min: 1, max: 700 }),
    async (reqs, runRequests, batchSize) => {
      const { out, sorter } = await sortAll(/** @type {Req[]} */ (reqs), { memoryBytes: runRequests * SORT_BYTES_PER_REQUEST }, batchSize)
      assert.deepEqual(out, reference(/** @type {Req[]} */ (reqs)))
      const s = sorter.summary()
      assert.equal(s.requests, reqs.length)
      assert.equal(s.onDisk, reqs.length > runRequests)
      if (s.onDisk) onDisk++
      assert.equal(s.runs, Math.max(1, Math.ceil(reqs.length / runRequests)))
      // moved: requests read after a later-timed one
      let newest = -Infinity
      let moved = 0
      for (const [t] of reqs) if (t < newest) moved++; else newest = t
      assert.equal(s.moved, moved)
    }
  ), { numRuns: 60, seed: 9, endOnFailure: true }) // shrinking 5,000-request cases through files takes minutes
  assert.ok(onDisk >= 10, `only ${onDisk} cases went to disk`)
  assert.deepEqual(await readdir(dir), [], 'run files and their directory are removed')
})

test('a stop in the middle of the merge still removes the run files', async () => {
  const reqs = /** @type {Req[]} */ (Array.from({ length: 5000 }, (_, i) => [(i * 7919) % 1000, i % 13, i % 17, i, 1]))
  const sorter = new RequestSorter({ memoryBytes: 1024 * SORT_BYTES_PER_REQUEST, tmpRoot: dir })
  async function * one () {
    const b = new RequestBatch(reqs.length)
    for (const r of reqs) b.push(...r)
    yield b
  }
  // take the first merged batch only, then leave early: the runs must still be cleaned up
  const merged = sorter.sorted(one())[Symbol.asyncIterator]()
  const first = await merged.next()
  assert.ok(!first.done && first.value.n > 0)
  assert.ok((await readdir(dir)).length === 1, 'the runs are on disk while merging')
  await merged.return?.(undefined)
  assert.deepEqual(await readdir(dir), [])
})

test('a temporary directory that cannot be written is MGH_SIM_ERR_SORT', async () => {
  const reqs = /** @type {Req[]} */ (Array.from({ length: 3000 }, (_, i) => [3000 - i, 0, 0, 1, 1]))
  await assert.rejects(sortAll(reqs, { memoryBytes: 1024 * SORT_BYTES_PER_REQUEST, tmpRoot: join(dir, 'missing', 'deeper') }, 512),
    { code: 'MGH_SIM_ERR_SORT', message: /missing/ })
})
