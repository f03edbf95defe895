/**
 * The coordinator load generator (bench/coordinator-load.js) runs as a user
 * runs it: a short run on the in-process store prints one JSON line with
 * every figure, so does one against the bare `ws` server (`--server bare`),
 * and bad flags exit 2. No figure is held to a value: the
 * bench measures, the test only checks that it works.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const BENCH = fileURLToPath(new URL('../../bench/coordinator-load.js', import.meta.url))

/**
 * @param {string[]} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function runBench (args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BENCH, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
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
})

test('--server bare answers the same transactions with no errors, every relayed connect delivered', async () => {
  const { code, stdout, stderr } = await runBench(['--server', 'bare', '--seconds', '1', '--warmup', '0.2', '--clients', '50', '--idle', '100', '--store', 'memory'])
  assert.equal(code, 0, stderr)
  const lines = stdout.trim().split('\n')
  assert.equal(lines.length, 1, stdout)
  const result = JSON.parse(lines[0])
  assert.equal(result.server, 'bare')
  for (const field of NUMBERS) assert.ok(Number.isFinite(result[field]), `${field} in ${lines[0]}`)
  assert.ok(result.transactions > 0, lines[0])
  assert.equal(result.errors, 0, lines[0])
  // 50 joined clients: every lookup names another one, so every transaction relays a connect.
  assert.equal(result.misses, 0, lines[0])
  assert.equal(result.connects, result.transactions, lines[0])
  assert.equal(result.signalsReceived, result.connects, 'every relayed connect reached its target')
})

test('bad flags exit 2 with a message; memory cannot be shared by two processes, and --server bare needs both', async () => {
  for (const args of [['--processes', '2', '--store', 'memory'], ['--store', 'disk'], ['--seconds', 'x'], ['--bogus'],
    ['--server', 'nginx'], ['--server', 'bare', '--store', 'redis'], ['--server', 'bare', '--processes', '2', '--store', 'redis']]) {
    const { code, stdout, stderr } = await runBench(args)
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    assert.equal(stdout, '')
    assert.match(stderr, /coordinator-load: .+ \(see --help\)/)
  }
  const { stderr } = await runBench(['--processes', '2', '--store', 'memory'])
  assert.match(stderr, /--store memory .* processes cannot share/)
  assert.match((await runBench(['--server', 'nginx'])).stderr, /--server must be one of coordinator, bare, got "nginx"/)
  for (const args of [['--store', 'redis'], ['--processes', '2']]) {
    const { stderr } = await runBench(['--server', 'bare', ...args])
    assert.match(stderr, /--server bare is one process with no store: use --store memory and --processes 1/, args.join(' '))
  }
})
