// Time order: a trace out of order beyond --order-tolerance is refused with the line that shows it;
// within the tolerance it is clamped and counted; --sort replays a shuffled EPA log exactly as its sorted original.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'
import { openTrace } from '../src/input/open-trace.js'
import { TraceReader } from '../src/input/trace-reader.js'
import { runCli } from './run-cli.js'

const EPA = fileURLToPath(new URL('../../../shared/traces/epa-http.zip', import.meta.url))
const skipTraces = existsSync(EPA) ? false : `shared traces not found at ${EPA}; these tests need ../shared/traces beside the repo`

/** @param {string[]} args */
const run = (args) => runCli(['--no-progress', ...args])

/** @type {string} */
let dir
before(async () => { dir = await mkdtemp(join(tmpdir(), 'maygh-sim-order-')) })
after(async () => { await rm(dir, { recursive: true, force: true }) })

/**
 * @param {number} s seconds after 00:00:00
 * @returns {string} a CLF line at that time on 1 July 1995
 */
const clf = (s) => `h${s % 3} - - [01/Jul/1995:${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')} -0400] "GET /a.gif HTTP/1.0" 200 100`

/**
 * @param {string} path
 * @param {object} [options]
 */
async function readAll (path, options) {
  const reader = new TraceReader(path, options)
  for await (const b of reader.batches()) assert.ok(b.n > 0)
  return reader
}

test('a request behind the newest time by more than the tolerance stops the run, naming its line', async () => {
  const path = join(dir, 'late.log')
  // line 4 is 9 s behind line 3 (within 10 s); line 6 is 11 s behind line 5
  await writeFile(path, [clf(100), clf(101), clf(120), clf(111), clf(200), clf(189), clf(201)].join('\n'))
  await assert.rejects(readAll(path), (err) => {
    assert.equal(/** @type {any} */ (err).code, 'MGH_SIM_ERR_UNSORTED')
    assert.match(/** @type {Error} */ (err).message, /late\.log line 6 \(.*\): its time, 1995-07-01 04:03:09 UTC, is 11 s before the newest time read so far, 1995-07-01 04:03:20 UTC \(line 5\); --order-tolerance is 10 s\. Run with --sort/)
    return true
  })
  // a wider tolerance accepts it
  const reader = await readAll(path, { orderTolerance: 11 })
  assert.equal(reader.requests, 7)
})

test('within the tolerance requests are clamped and counted, and the summary says so', async () => {
  const path = join(dir, 'jitter.log')
  await writeFile(path, [clf(100), clf(105), clf(103), clf(104), clf(110)].join('\n'))
  const { code, stdout } = await run(['--trace', path])
  assert.equal(code, 0)
  assert.match(stdout, /time order: 2 requests were behind the newest time read before them, by at most --order-tolerance 10 s/)
  const json = JSON.parse((await run(['--trace', path, '--json'])).stdout)
  assert.equal(json.reorderedRequests, 2)
  assert.equal(json.input.orderTolerance, 10)
  const zero = await run(['--trace', path, '--order-tolerance', '0'])
  assert.equal(zero.code, 2)
  assert.match(zero.stderr, /^maygh-sim: MGH_SIM_ERR_UNSORTED: .* line 3 /)
})

/**
 * The EPA log's lines with their times in seconds (`[DD:HH:MM:SS]`).
 * @returns {Promise<{ line: string, t: number }[]>}
 */
async function epaLines () {
  const chunks = []
  for await (const c of (await openTrace(EPA)).stream) chunks.push(c)
  return Buffer.concat(chunks).toString('latin1').split('\n').filter((l) => l.length > 0).map((line) => {
    const m = /\[(\d\d):(\d\d):(\d\d):(\d\d)\]/.exec(line)
    assert.ok(m, line)
    return { line, t: ((+m[1] * 24 + +m[2]) * 60 + +m[3]) * 60 + +m[4] }
  })
}

/**
 * A report without what differs between runs of the same requests: timings and the input's description.
 * @param {string} stdout
 */
function comparable (stdout) {
  const { elapsedSeconds, requestsPerSecond, input, ...rest } = JSON.parse(stdout)
  return rest
}

test('a shuffled EPA log is refused at its first late line; --sort replays it exactly as the sorted original', { skip: skipTraces }, async () => {
  const lines = await epaLines()
  // the original, sorted stably by time (15 of its lines are a few seconds late)
  const sorted = lines.map((l, i) => ({ ...l, i })).sort((a, b) => a.t - b.t || a.i - b.i)
  await writeFile(join(dir, 'sorted.log'), sorted.map((l) => l.line).join('\n') + '\n')
  // shuffle the seconds, keeping the lines of each second in order: a log stamped to the second
  // says nothing else about the order within one, so a stable sort can restore exactly these ties
  /** @type {{ line: string, t: number }[][]} */
  const seconds = []
  for (const l of sorted) {
    if (seconds.length === 0 || seconds[seconds.length - 1][0].t !== l.t) seconds.push([])
    seconds[seconds.length - 1].push(l)
  }
  let seed = 12345
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32)
  for (let i = seconds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[seconds[i], seconds[j]] = [seconds[j], seconds[i]]
  }
  const shuffled = seconds.flat()
  await writeFile(join(dir, 'shuffled.log.gz'), zlib.gzipSync(shuffled.map((l) => l.line).join('\n') + '\n'))
  // where it must stop, and how many requests --sort moves
  let newest = -Infinity
  let newestLine = 0
  let firstLate = 0
  let newestThen = 0
  let moved = 0
  shuffled.forEach(({ t }, i) => {
    if (t >= newest) {
      newest = t
      newestLine = i + 1
    } else {
      moved++
      if (firstLate === 0 && newest - t > 10) {
        firstLate = i + 1
        newestThen = newestLine
      }
    }
  })
  assert.ok(firstLate > 0 && moved > 20_000)

  const refused = await run(['--trace', join(dir, 'shuffled.log.gz')])
  assert.equal(refused.code, 2)
  assert.equal(refused.stdout, '')
  assert.match(refused.stderr, new RegExp(`^maygh-sim: MGH_SIM_ERR_UNSORTED: .*shuffled\\.log\\.gz line ${firstLate} .* \\(line ${newestThen}\\); .*--sort`))

  const original = await run(['--trace', join(dir, 'sorted.log'), '--json'])
  const inMemory = await run(['--trace', join(dir, 'shuffled.log.gz'), '--sort', '--json'])
  const onDisk = await run(['--trace', join(dir, 'shuffled.log.gz'), '--sort', '--sort-memory', '64k', '--json'])
  const zip = await run(['--trace', EPA, '--sort', '--json'])
  for (const r of [original, inMemory, onDisk, zip]) assert.equal(r.code, 0, r.stderr)
  assert.equal(JSON.parse(original.stdout).reorderedRequests, 0)
  assert.deepEqual(comparable(inMemory.stdout), comparable(original.stdout))
  assert.deepEqual(comparable(onDisk.stdout), comparable(original.stdout))
  assert.deepEqual(comparable(zip.stdout), comparable(original.stdout), 'the zip sorted by --sort is the sorted original')
  const memory = JSON.parse(inMemory.stdout).input.sorted
  assert.deepEqual(memory, { requests: 47_748, moved, onDisk: false, runs: 1, memoryBytes: 512 * 1024 * 1024 })
  const disk = JSON.parse(onDisk.stdout).input.sorted
  assert.deepEqual(disk, { requests: 47_748, moved, onDisk: true, runs: Math.ceil(47_748 / 2048), memoryBytes: 65_536 })
  assert.equal(JSON.parse(zip.stdout).input.sorted.moved, 15)
  // stderr says it sorts, and how much moved
  assert.match(inMemory.stderr, /--sort: sorting the trace by time, in memory up to 512 MiB/)
  assert.match(onDisk.stderr, new RegExp(`input sorted: ${moved.toLocaleString('en-US')} of 47,748 requests moved \\(on disk, 24 runs merged\\)`))
})
