// The coordinator process stops on SIGTERM whatever became of its stdout: a
// pipe whose reader has gone (`maygh-coordinator | head -3`), a full disk
// (/dev/full). It once hung there until SIGKILL (logger.js, logDestination).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, existsSync, openSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/support/redis-server.js'
import { TestClient } from '../../test/support/test-client.js'

const BIN = fileURLToPath(new URL('../bin/maygh-coordinator.js', import.meta.url))
/** A generous bound: the drain window below is 100 ms, and the exit flushes logs for at most 2 s. */
const EXIT_BOUND_MS = 10_000
const ARGS = ['--stun-port', '0', '--drain-window-ms', '100']

/**
 * How the child ended, or a failure if it is still up after EXIT_BOUND_MS
 * (then it is SIGKILLed, so no test leaves it behind).
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<{ code: number | null, signal: string | null }>}
 */
async function exitOf (child) {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode }
  const bound = AbortSignal.timeout(EXIT_BOUND_MS)
  try {
    const [code, signal] = await once(child, 'exit', { signal: bound })
    return { code, signal }
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`still running ${EXIT_BOUND_MS} ms after SIGTERM`, { cause: err })
  }
}

/**
 * A client that has joined, so that the drain has someone to move and logs about it.
 * @param {string} url
 * @returns {Promise<TestClient>}
 */
async function joinedClient (url) {
  const client = await TestClient.open(url)
  client.ws.on('error', () => {})
  const welcome = await client.request({ type: 'join', assets: [] })
  assert.equal(welcome.type, 'welcome')
  return client
}

test('stdout a pipe whose reader has gone: SIGTERM still drains and exits 0', async () => {
  const child = spawn(process.execPath, [BIN, '--port', '0', ...ARGS], { stdio: ['ignore', 'pipe', 'pipe'] })
  try {
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => { out += chunk })
    while (!/"msg":"listening"/.test(out)) await once(child.stdout, 'data')
    // The reader goes, as `| head` does, and SIGTERM comes: the first lines to
    // meet the closed pipe are the stop's own ("stopping", "stopped"), the
    // case that hung; stderr is closed too.
    child.stdout.destroy()
    child.stderr?.destroy()
    child.kill('SIGTERM')
    assert.deepEqual(await exitOf(child), { code: 0, signal: null })
  } finally {
    child.kill('SIGKILL')
  }
})

test('stdout a pipe whose reader has gone while a client is on: the drain moves it, logging into the closed pipe, and exits 0', async () => {
  const child = spawn(process.execPath, [BIN, '--port', '0', ...ARGS, '--log-level', 'debug'], { stdio: ['ignore', 'pipe', 'pipe'] })
  try {
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => { out += chunk })
    while (!/"msg":"listening"/.test(out)) await once(child.stdout, 'data')
    const url = JSON.parse(/** @type {string} */ (out.split('\n').find((line) => line.includes('"msg":"listening"')))).url
    child.stdout.destroy()
    child.stderr?.destroy()
    const client = await joinedClient(url)
    child.kill('SIGTERM')
    assert.equal((await client.next()).type, 'move', 'the drain tells the client to move')
    assert.deepEqual(await exitOf(child), { code: 0, signal: null })
  } finally {
    child.kill('SIGKILL')
  }
})

test('stdout /dev/full (a full disk): the coordinator serves, then drains and exits 0 on SIGTERM', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, async () => {
  const port = await freePort()
  const full = openSync('/dev/full', 'w')
  const child = spawn(process.execPath, [BIN, '--port', String(port), ...ARGS, '--log-level', 'debug'], { stdio: ['ignore', full, 'pipe'] })
  closeSync(full)
  try {
    let err = ''
    const stderr = /** @type {import('node:stream').Readable} */ (child.stderr)
    stderr.setEncoding('utf8')
    stderr.on('data', (chunk) => { err += chunk })
    // Every log line fails with ENOSPC, from the first; the coordinator carries on.
    for (let tries = 0; await readyz(port) !== 200; tries++) {
      assert.ok(tries < 100 && child.exitCode === null, `not ready: ${err}`)
      await sleep(50)
    }
    const client = await joinedClient(`ws://127.0.0.1:${port}`)
    child.kill('SIGTERM')
    assert.deepEqual(await exitOf(child), { code: 0, signal: null })
    assert.match(err, /^maygh-coordinator: cannot write logs to stdout \(ENOSPC\); log lines are dropped from now on\n$/)
    client.ws.terminate()
  } finally {
    child.kill('SIGKILL')
  }
})

/**
 * @param {number} port
 * @returns {Promise<number>} the status of GET /readyz; 0 while nothing answers (within a second)
 */
async function readyz (port) {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) })).status
  } catch {
    return 0
  }
}
