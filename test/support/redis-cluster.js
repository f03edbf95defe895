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
 * @param {{ nodes?: number, requireFullCoverage?: boolean }} [options]
 *   `requireFullCoverage`: Redis's `cluster-require-full-coverage` (its default, true: every
 *   node refuses every command while any slot has no master, as during a failover)
 * @returns {Promise<{ url: string, nodes: { host: string, port: number }[],
 *   servers: Awaited<ReturnType<typeof startRedisServer>>[], close: () => Promise<void> }>}
 *   `servers`: each node's process (a test may kill one)
 */
export async function startRedisCluster ({ nodes = 6, requireFullCoverage = true } = {}) {
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
        // Replicas sync at once (the default waits 5 s for more replicas before a
        // diskless transfer): a replica that has not synced cannot take over.
        args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${i}.conf`), '--cluster-node-timeout', '5000', '--repl-diskless-sync-delay', '0',
          '--cluster-require-full-coverage', requireFullCoverage ? 'yes' : 'no']
      }))
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`)
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'])
    // Wait until every node agrees the cluster is up and knows every replica
    // as one, and every replica has synced: until then a replica cannot take
    // over from its master (a failover test depends on it).
    const replicas = nodes - Math.ceil(nodes / 2)
    // Generous: a loaded CI machine (browsers in other test files) slows the gossip.
    const deadline = Date.now() + 90_000
    for (const s of servers) {
      for (;;) {
        const [{ stdout: info }, { stdout: view }, { stdout: replication }] = await Promise.all([
          run('redis-cli', ['-p', String(s.port), 'cluster', 'info']),
          run('redis-cli', ['-p', String(s.port), 'cluster', 'nodes']),
          run('redis-cli', ['-p', String(s.port), 'info', 'replication'])
        ])
        const synced = !replication.includes('role:slave') || replication.includes('master_link_status:up')
        if (info.includes('cluster_state:ok') && (view.match(/[ ,]slave /g) ?? []).length === replicas && synced) break
        if (Date.now() > deadline) throw new Error(`cluster node ${s.port} never agreed on the cluster's state and replicas`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    return {
      url: `redis+cluster://${addresses.join(',')}`,
      nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
      servers,
      close
    }
  } catch (err) {
    await close()
    throw err
  }
}
