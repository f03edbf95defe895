/**
 * Starts a real redis-server as a child of the test process, on a free
 * loopback port, keeping nothing on disk. Tests never rely on a Redis someone
 * started by hand (CI's machine may not have one, and a network namespace
 * cannot see the host's).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * @returns {Promise<number>} a TCP port that was free a moment ago
 */
export async function freePort () {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * @param {number} port
 * @returns {Promise<boolean>} whether the port accepts a Redis PING
 */
async function answersPing (port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('error', () => resolve(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
  })
}

/**
 * @param {{ args?: string[], port?: number }} [options] extra redis-server arguments; a port to
 *   take (to restart a server on the port it had), else a free one
 * @returns {Promise<{ url: string, port: number, process: import('node:child_process').ChildProcess, close: () => Promise<void> }>}
 */
export async function startRedisServer (options = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-redis-'))
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = options.port ?? await freePort()
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.args ?? [])], { stdio: ['ignore', 'ignore', 'pipe'] })
    const state = { exited: false } // set by the 'exit' listener while the loop below awaits
    child.once('exit', () => { state.exited = true })
    const spawnError = new Promise((resolve) => child.once('error', resolve))
    for (let i = 0; i < 100 && !state.exited; i++) {
      if (await answersPing(port)) {
        return {
          url: `redis://127.0.0.1:${port}`,
          port,
          process: child,
          close: async () => {
            if (!state.exited) {
              const gone = new Promise((resolve) => child.once('exit', resolve))
              child.kill('SIGKILL')
              await gone
            }
            await rm(dir, { recursive: true, force: true })
          }
        }
      }
      const failed = await Promise.race([spawnError, sleep(50).then(() => null)])
      if (failed) throw new Error(`cannot start redis-server (is it installed?): ${/** @type {Error} */ (failed).message}`)
    }
    child.kill('SIGKILL')
  }
  throw new Error('redis-server did not come up on a free port after 5 attempts')
}
