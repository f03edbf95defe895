/**
 * A real TURN server (coturn's `turnserver`, from Debian's package) as a child
 * of the test process, on loopback: TURN REST API credentials
 * (`use-auth-secret`), relay ports from a range of its own, loopback peers
 * allowed (everything here is 127.0.0.1), nothing written outside a
 * temporary directory. What privacy mode's tests and bench relay through.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createSocket } from 'node:dgram'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './redis-server.js'

const START_TIMEOUT_MS = 10_000

/** @type {Set<import('node:child_process').ChildProcess>} killed if the test process exits first */
const alive = new Set()
process.once('exit', () => { for (const child of alive) child.kill('SIGKILL') })

/**
 * @param {{ secret?: string }} [options]
 * @returns {Promise<{ url: string, secret: string, port: number, log: () => string, close: () => Promise<void> }>}
 *   `url`: `turn:127.0.0.1:PORT?transport=udp`; `log`: what it has printed (allocations, errors)
 */
export async function startTurnServer ({ secret = 'maygh-test-turn-secret' } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-turn-'))
  const port = await freePort()
  // A relay port range of its own, so that two servers (or a busy machine) do not collide.
  const minPort = 20000 + Math.floor(Math.random() * 400) * 100
  const child = spawn('turnserver', [
    '-n', '--listening-ip=127.0.0.1', '--relay-ip=127.0.0.1', `--listening-port=${port}`,
    `--min-port=${minPort}`, `--max-port=${minPort + 99}`,
    '--use-auth-secret', `--static-auth-secret=${secret}`, '--realm=maygh.test',
    '--allow-loopback-peers', '--no-cli', '--no-tls', '--no-dtls', '--no-multicast-peers', '--fingerprint',
    '--log-file=stdout', '--simple-log', `--pidfile=${join(dir, 'pid')}`, `--userdb=${join(dir, 'turndb')}`
  ], { stdio: ['ignore', 'pipe', 'pipe'] })
  alive.add(child)
  let out = ''
  const keep = (/** @type {Buffer} */ data) => { out = (out + data).slice(-256 * 1024) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000)
      await exited
      clearTimeout(timer)
    }
    alive.delete(child)
    await rm(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + START_TIMEOUT_MS
  // Ready once it answers a STUN binding request on its UDP port.
  while (!(await answersStun(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close()
      throw new Error(`turnserver did not start:\n${out.slice(-4000)}`)
    }
  }
  return { url: `turn:127.0.0.1:${port}?transport=udp`, secret, port, log: () => out, close }
}

/**
 * @param {number} port
 * @returns {Promise<boolean>} whether a STUN binding request to 127.0.0.1:port is answered within 200 ms
 */
async function answersStun (port) {
  const socket = createSocket('udp4')
  try {
    // Binding request: type 1, length 0, the magic cookie, a transaction id.
    const request = Buffer.concat([Buffer.from([0, 1, 0, 0, 0x21, 0x12, 0xa4, 0x42]), randomBytes(12)])
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 200)
      socket.once('message', () => { clearTimeout(timer); resolve(true) })
      socket.once('error', () => { clearTimeout(timer); resolve(false) })
      socket.send(request, port, '127.0.0.1')
    })
  } finally {
    socket.close()
  }
}
