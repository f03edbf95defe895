/**
 * Starts a real 6-node Redis Cluster (3 masters, 3 replicas) as children of
 * the test process, on free loopback ports, keeping nothing on disk.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startRedisServer } from './redis-server.js'

const run = promisify(execFile)

/**
 * @param {{ nodes?: number }} [options]
 * @returns {Promise<{ url: string, nodes: { host: string, port: number }[], close: () => Promise<void> }>}
 */
export async function startRedisCluster ({ nodes = 6 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-cluster-'))
  /** @type {Awaited<ReturnType<typeof startRedisServer>>[]} */
  const servers = []
  const close = async () => {
    await Promise.all(servers.map((s) => s.close()))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < nodes; i++) {
      servers.push(await startRedisServer({
        args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${i}.conf`), '--cluster-node-timeout', '5000']
      }))
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`)
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'])
    // Wait until every node agrees the cluster is up.
    for (const s of servers) {
      for (let i = 0; ; i++) {
        const { stdout } = await run('redis-cli', ['-p', String(s.port), 'cluster', 'info'])
        if (stdout.includes('cluster_state:ok')) break
        if (i > 100) throw new Error(`cluster node ${s.port} never reached cluster_state:ok`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    return {
      url: `redis+cluster://${addresses.join(',')}`,
      nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
      close
    }
  } catch (err) {
    await close()
    throw err
  }
}
