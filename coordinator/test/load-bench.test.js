/**
 * The coordinator load generator (bench/coordinator-load.js) runs as a user
 * runs it: a short run on the in-process store prints one JSON line with
 * every figure, so do runs against the bare `ws` server (`--server bare`)
 * and WebTorrent's tracker (`--server bittorrent-tracker`), and bad flags exit 2. No figure is held to a value: the
 * bench measures, the test only checks that it works.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { loopStats, parseLoopSample } from '../../bench/coordinator-load/loop-stats.js'

const BENCH = fileURLToPath(new URL('../../bench/coordinator-load.js', import.meta.url))
const COMPARE = fileURLToPath(new URL('../../bench/coordinator-compare.js', import.meta.url))
const FRAME_COST = fileURLToPath(new URL('../../bench/coordinator-frame-cost.js', import.meta.url))
const FRAME_COST_AB = fileURLToPath(new URL('../../bench/coordinator-frame-cost-ab.js', import.meta.url))

/**
 * @param {string[]} args
 * @param {string} [script] the load generator, or the comparison that runs it
 * @param {number} [timeout] ms before the run is killed
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function runBench (args, script = BENCH, timeout = 60_000) {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { timeout }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
      resolve({ code, stdout, stderr })
    })
  })
}

const NUMBERS = ['processes', 'clients', 'seconds', 'tps', 'tpsPerCoreS', 'p50Ms', 'p99Ms', 'errors', 'misses',
  'bytesPerClient', 'serverCpuS', 'redisCpuS']

test('a one-second run on the memory store prints one JSON line with every figure', async () => {
  const { code, stdout, stderr } = await runBench(['--seconds', '1', '--warmup', '0.2', '--clients', '50', '--idle', '100', '--store', 'memory'])
  assert.equal(code, 0, stderr)
  const lines = stdout.trim().split('\n')
  assert.equal(lines.length, 1, stdout)
  const result = JSON.parse(lines[0])
  assert.equal(result.store, 'memory')
  assert.equal(result.server, 'coordinator')
  for (const field of NUMBERS) {
    assert.equal(typeof result[field], 'number', `${field} in ${lines[0]}`)
    assert.ok(Number.isFinite(result[field]), `${field} in ${lines[0]}`)
  }
  assert.equal(result.errors, 0, lines[0])
  assert.ok(result.tps > 0, lines[0])
  assert.equal(result.signalsReceived, result.connects, 'every relayed connect reached its target')
  // The coordinator's own view of its loop over the window (loop-stats.js).
  for (const field of ['serverLoopLagP99Ms', 'serverLoopLagMaxMs', 'serverGcS', 'serverMajorGcS']) assert.ok(Number.isFinite(result[field]) && result[field] >= 0, `${field} in ${lines[0]}`)
  assert.ok(result.serverLoopLagMaxMs >= result.serverLoopLagP99Ms, lines[0])
})

test('loop-stats reads the loop delay and garbage collection out of /metrics, over a window', () => {
  const exposition = (/** @type {number} */ p99, /** @type {number} */ max, /** @type {number} */ minor, /** @type {number} */ major) => [
    '# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
    `nodejs_eventloop_lag_p99_seconds ${p99}`,
    `nodejs_eventloop_lag_max_seconds ${max}`,
    'nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 3',
    `nodejs_gc_duration_seconds_sum{kind="minor"} ${minor}`,
    `nodejs_gc_duration_seconds_sum{kind="major"} ${major}`,
    'nodejs_gc_duration_seconds_count{kind="major"} 2'
  ].join('\n')
  const before = [parseLoopSample(exposition(0.5, 0.9, 1, 0.25)), parseLoopSample(exposition(0, 0, 2, 0))]
  assert.deepEqual(before[0], { lagP99Ms: 500, lagMaxMs: 900, gcS: { minor: 1, major: 0.25 } })
  const after = [parseLoopSample(exposition(0.012, 0.03, 1.5, 0.5)), parseLoopSample(exposition(0.02, 0.025, 2.25, 0))]
  assert.deepEqual(loopStats(before, after), { loopLagP99Ms: 20, loopLagMaxMs: 30, gcS: 1, gcMajorS: 0.25 })
})

for (const [server, signal] of [['bare', 'offer'], ['bare', 'connect'], ['coordinator', 'connect'], ['bittorrent-tracker', 'offer']]) {
  test(`--server ${server} --signal ${signal} runs the same transactions with no errors, every relayed offer delivered`, async () => {
    const { code, stdout, stderr } = await runBench(['--server', server, '--signal', signal, '--seconds', '1', '--warmup', '0.2', '--clients', '50', '--assets', '100', '--idle', '100', '--store', 'memory'])
    assert.equal(code, 0, stderr)
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 1, stdout)
    const result = JSON.parse(lines[0])
    assert.equal(result.server, server)
    assert.equal(result.signal, server === 'bittorrent-tracker' ? 'announce' : signal)
    for (const field of NUMBERS) assert.ok(Number.isFinite(result[field]), `${field} in ${lines[0]}`)
    assert.ok(result.transactions > 0, lines[0])
    // (bytesPerClient is finite, above; 100 idle clients are too few for its sign to mean anything)
    assert.equal(result.errors, 0, lines[0])
    // 50 clients hold 20 of 100 assets each: an asset has 10 holders on average, so most lookups find one.
    assert.ok(result.connects > 10 * result.misses, lines[0])
    assert.equal(result.connects + result.misses, result.transactions, lines[0])
    assert.equal(result.signalsReceived, result.connects, 'every relayed offer reached its target')
    assert.equal('serverLoopLagP99Ms' in result, server !== 'bittorrent-tracker', 'the coordinator and the bare server say what held their loops up')
  })
}

test('--flood pairs windows with and without a flooding client; each flooder is cut off at the production rate limit', async () => {
  const { code, stdout, stderr } = await runBench(['--flood', '--flood-rounds', '2', '--peer-rate-limit', '200', '--rate', '300', '--seconds', '1',
    '--warmup', '0.2', '--clients', '50', '--assets', '100', '--idle', '0', '--store', 'memory'])
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  assert.equal(result.floodRounds, 2, stdout)
  assert.deepEqual(result.floodCloseCodes, [1008, 1008], stdout)
  assert.ok(result.floodClosedAfterS.every((/** @type {number} */ s) => s > 0 && s < 1), stdout)
  for (const field of ['baselineP50Ms', 'baselineP99Ms', 'floodP99Ratio']) assert.ok(Number.isFinite(result[field]) && result[field] > 0, `${field} in ${stdout}`)
  // Two windows of each kind at 300/s: the others' transactions all went through, none refused.
  assert.equal(result.errors, 0, stdout)
  assert.ok(result.transactions >= 1000, stdout)
  assert.equal(result.connects + result.misses, result.transactions, stdout)
  assert.equal(result.signalsReceived, result.connects, 'every relayed connect of every window reached its target')
})

test('bench:compare runs every server of a workload in turn, then latency at half load and memory per idle client, and says which targets are met', async () => {
  const { code, stdout, stderr } = await runBench(['--workload', 'transaction', '--no-redis', '--rounds', '1', '--seconds', '0.5', '--warmup', '0.2', '--idle', '200'], COMPARE, 120_000)
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  const { servers, ratios } = result.workloads.transaction
  assert.deepEqual(Object.keys(servers), ['coordinator/memory', 'bittorrent-tracker', 'bare ws'])
  for (const figures of Object.values(servers)) {
    for (const figure of ['tpsPerCoreS', 'tps', 'p50Ms', 'p99Ms']) assert.ok(figures[figure].min > 0, `${figure} in ${stdout}`)
    assert.ok(figures.transactions > 0 && figures.errors === 0, `transactions and errors in ${stdout}`)
  }
  for (const other of ['bittorrent-tracker', 'bare ws']) {
    const ratio = ratios[`coordinator/memory / ${other}`]
    assert.equal(ratio.tpsPerCoreS.median, Math.round(servers['coordinator/memory'].tpsPerCoreS.median / servers[other].tpsPerCoreS.median * 100) / 100, stdout)
    // 200 idle clients are too few for the sign of a memory figure to mean anything (GC can make one
    // negative): each server's figure is there, and a ratio wherever its divisor is above zero
    const divisor = result.memory.servers[other].bytesPerClient
    assert.ok(Number.isFinite(divisor) && Number.isFinite(result.memory.servers['coordinator/memory'].bytesPerClient), stdout)
    const memoryRatio = result.memory.ratios[`coordinator/memory / ${other}`]
    if (divisor > 0) assert.ok(Number.isFinite(memoryRatio), stdout)
    else assert.equal(memoryRatio, undefined, stdout)
  }
  assert.equal(result.latency.rate, Math.round(servers['coordinator/memory'].tps.median / 2), stdout)
  assert.deepEqual(Object.keys(result.latency.servers), ['coordinator/memory', 'bare ws', 'bittorrent-tracker'])
  assert.equal(result.latency.p99Ratios['coordinator/memory / bare ws'].byRound.length, 1, stdout)
  for (const other of ['bare ws', 'bittorrent-tracker']) {
    const perCore = result.latency.perCoreRatios[`coordinator/memory / ${other}`]
    assert.ok(perCore.byRound.length === 1 && perCore.median > 0, `per core-second at the same offered load, against ${other}: ${stdout}`)
  }
  assert.equal(typeof result.targets.transactionMemoryVsTracker.met, 'boolean', stdout)
  assert.equal(typeof result.targets.p99AtHalfLoadVsBare.met, 'boolean', stdout)
  assert.equal(result.targets.relayVsPeerjs.met, null, 'the relay workload did not run')
  // The machine's speed before and after the run, beside the figures (bench/machine-speed.js).
  for (const when of ['before', 'after']) assert.ok(result.machine.referenceMs[when] > 0, stdout)
  const bad = await runBench(['--rounds', '0'], COMPARE)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--rounds must be an integer from 1 to 20, got "0"/)
})

test('bad flags exit 2 with a message; memory cannot be shared by two processes, the other servers need both, the tracker takes no flood', async () => {
  for (const args of [['--processes', '2', '--store', 'memory'], ['--store', 'disk'], ['--seconds', 'x'], ['--bogus'],
    ['--server', 'nginx'], ['--server', 'bare', '--store', 'redis'], ['--server', 'bare', '--processes', '2', '--store', 'redis'],
    ['--server', 'bittorrent-tracker', '--store', 'cluster'], ['--server', 'bittorrent-tracker', '--flood'], ['--signal', 'carrier-pigeon']]) {
    const { code, stdout, stderr } = await runBench(args)
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    assert.equal(stdout, '')
    assert.match(stderr, /coordinator-load: .+ \(see --help\)/)
  }
  const { stderr } = await runBench(['--processes', '2', '--store', 'memory'])
  assert.match(stderr, /--store memory .* processes cannot share/)
  assert.match((await runBench(['--server', 'nginx'])).stderr, /--server must be one of coordinator, bare, bittorrent-tracker, peerjs, got "nginx"/)
  for (const args of [['--store', 'redis'], ['--processes', '2']]) {
    const { stderr } = await runBench(['--server', 'bare', ...args])
    assert.match(stderr, /--server bare is one process with no store: use --store memory and --processes 1/, args.join(' '))
  }
  assert.match((await runBench(['--server', 'bittorrent-tracker', '--flood'])).stderr, /--flood sends the coordinator's lookups, which bittorrent-tracker does not speak/)
})

test('on Redis, the run says what Redis did per transaction: commands, bytes each way, CPU', async () => {
  const { code, stdout, stderr } = await runBench(['--store', 'redis', '--seconds', '1', '--warmup', '0.2', '--clients', '50', '--assets', '100', '--idle', '0'])
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  assert.equal(result.errors, 0, stdout)
  // A lookup (HRANDFIELD), its mark (a script: HEXISTS, HSET) and the swap (a script: SREM, HDEL, SADD, HSETNX), at least.
  assert.ok(result.redisCommandsPerTx >= 3, stdout)
  for (const field of ['redisBytesInPerTx', 'redisBytesOutPerTx', 'redisCpuUsPerTx']) assert.ok(Number.isFinite(result[field]) && result[field] > 0, `${field} in ${stdout}`)
})

test('--workload page: page views on sockets of their own, the same page in each server\'s protocol, no errors', async () => {
  for (const server of ['coordinator', 'bare', 'bittorrent-tracker']) {
    const { code, stdout, stderr } = await runBench(['--server', server, '--workload', 'page', '--page-assets', '10', '--seconds', '1', '--warmup', '0.2', '--clients', '30', '--assets', '100', '--idle', '0'])
    assert.equal(code, 0, stderr)
    const result = JSON.parse(stdout)
    assert.equal(result.workload, 'page', stdout)
    assert.equal(result.pageAssets, 10, stdout)
    assert.equal(result.errors, 0, stdout)
    assert.ok(result.transactions > 0 && result.connects > 0, stdout)
    // Up to 3 offers a page, each delivered to a visitor then viewing a page.
    assert.ok(result.signalsReceived <= 3 * result.transactions, stdout)
  }
  const bad = await runBench(['--workload', 'page', '--flood'])
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--workload page is the browser client's page view/)
})

test('--workload relay: each client signals its partner through the coordinator, the bare server and PeerJS\'s server, every signal delivered', async () => {
  for (const server of ['coordinator', 'bare', 'peerjs']) {
    const { code, stdout, stderr } = await runBench(['--server', server, '--workload', 'relay', '--seconds', '1', '--warmup', '0.2', '--clients', '50', '--assets', '100', '--idle', '0'])
    assert.equal(code, 0, stderr)
    const result = JSON.parse(stdout)
    assert.equal(result.workload, 'relay', stdout)
    assert.equal(result.errors, 0, stdout)
    assert.ok(result.transactions > 0, stdout)
    assert.equal(result.signalsReceived, result.connects, 'every signal reached its target')
  }
  for (const args of [['--server', 'peerjs'], ['--server', 'bittorrent-tracker', '--workload', 'relay']]) assert.equal((await runBench(args)).code, 2, args.join(' '))
})

test('bench:frame-cost times the coordinator\'s own work per transaction in process: every request answered, none refused', async () => {
  const { code, stdout, stderr } = await runBench(['--clients', '50', '--assets', '100', '--transactions', '2000', '--runs', '2'], FRAME_COST)
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  assert.equal(result.usPerTx.length, 2)
  for (const us of [...result.usPerTx, result.medianUsPerTx]) assert.ok(Number.isFinite(us) && us > 0, stdout)
  assert.equal(result.errors, 0, stdout)
  // The joins' welcomes, then per transaction (500 warming up, 2 × 2,000 measured) a reply to each of its
  // two requests, and an offer relayed to most lookups' first holder.
  assert.ok(result.framesSent > 50 + 2 * 4500, stdout)
  const bad = await runBench(['--runs', 'x'], FRAME_COST)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--runs must be a positive integer, got "x"/)
  assert.match((await runBench(['--help'], FRAME_COST)).stdout, /^usage: node bench\/coordinator-frame-cost\.js/)
})

test('bench:frame-cost --workload relay times one relayed candidate: every signal reaches its target, none refused', async () => {
  const { code, stdout, stderr } = await runBench(['--workload', 'relay', '--clients', '50', '--transactions', '2000', '--runs', '2'], FRAME_COST)
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  assert.equal(result.workload, 'relay')
  assert.equal(result.usPerTx.length, 2)
  for (const us of [...result.usPerTx, result.medianUsPerTx]) assert.ok(Number.isFinite(us) && us > 0, stdout)
  assert.equal(result.errors, 0, stdout)
  // 500 warming up and 2 × 2,000 measured, each delivered to its target (no ref: no reply to the sender).
  assert.equal(result.signals, 4500, stdout)
  const bad = await runBench(['--workload', 'page'], FRAME_COST)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--workload must be transaction or relay, got "page"/)
})

test('bench:frame-cost\'s A/B runs both trees\' worlds in each order and reports their ratio', async () => {
  // This tree against itself: the shape of the answer, not its figures.
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const { code, stdout, stderr } = await runBench(['--base', root, '--workload', 'relay', '--pairs', '2', '--transactions', '500'], FRAME_COST_AB)
  assert.equal(code, 0, stderr)
  const result = JSON.parse(stdout)
  assert.deepEqual(result.orders.map((/** @type {{ first: string }} */ o) => o.first), ['base', 'new'])
  for (const o of result.orders) {
    assert.equal(o.errors, 0, stdout)
    for (const us of [o.baseUs, o.newUs, o.ratio]) assert.ok(Number.isFinite(us) && us > 0, stdout)
  }
  assert.ok(Number.isFinite(result.ratio) && result.ratio > 0, stdout)
  const bad = await runBench(['--workload', 'relay'], FRAME_COST_AB)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--base is required/)
})
