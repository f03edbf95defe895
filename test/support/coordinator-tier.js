/**
 * A coordinator tier the tests can take apart: N coordinator processes on one
 * store (a Redis Cluster or a single Redis the caller started), and the demo
 * shop, in this process, on a freshly built client bundle, naming the first
 * coordinator. See coordinator-process.js for what each coordinator is.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClient } from '../../client/build.js'
import { startDemoSite } from '../../demo-site/src/server.js'
import { LOOPBACK_CLIENT_DATA, until } from './browsers.js'
import { CoordinatorProcess } from './coordinator-process.js'

/**
 * @typedef {object} Tier
 * @property {CoordinatorProcess[]} coordinators named coordinator-1 … coordinator-N
 * @property {{ url: string }} shop
 * @property {{ version: 1, assets: Record<string, { hash: string, size: number, type: string }> }} manifest
 * @property {() => Promise<{ requests: number, bytes: number, byPath: Record<string, { requests: number, bytes: number }> }>} originStats
 * @property {() => Promise<void>} allLive start every coordinator that is not running, then wait until each
 *   counts all N as live shards (so every `welcome` names the others as alternates)
 * @property {() => Promise<void>} close kills every coordinator, stops the shop
 */

/**
 * @param {{ redisUrl: string, count: number, env?: Record<string, string> }} options
 *   `env`: extra coordinator settings (DRAIN_WINDOW_MS, …)
 * @returns {Promise<Tier>}
 */
export async function startTier ({ redisUrl, count, env = {} }) {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-tier-'))
  /** @type {CoordinatorProcess[]} */
  const coordinators = []
  /** @type {Awaited<ReturnType<typeof startDemoSite>> | undefined} */
  let site
  const close = async () => {
    await site?.close()
    await Promise.all(coordinators.map((c) => c.stop('SIGKILL')))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const { outdir } = await buildClient({ outdir: dir })
    for (let i = 1; i <= count; i++) coordinators.push(await CoordinatorProcess.start({ name: `coordinator-${i}`, redisUrl, env }))
    site = await startDemoSite({ port: 0, host: '127.0.0.1', coordinatorUrl: coordinators[0].url, clientDir: outdir, clientData: LOOPBACK_CLIENT_DATA })
    const siteUrl = site.url
    const tier = {
      coordinators,
      // marked-element mode: fresh visitors get peers' bytes on their first view
      shop: { url: siteUrl + '/elements' },
      manifest: await (await fetch(`${siteUrl}/maygh-manifest.json`)).json(),
      originStats: async () => (await fetch(`${siteUrl}/origin-stats`)).json(),
      allLive: async () => {
        for (const c of coordinators) if (!c.running) await c.start()
        for (const c of coordinators) await until(async () => (await c.stats()).shards === count)
      },
      close
    }
    await tier.allLive()
    return tier
  } catch (err) {
    await close()
    throw err
  }
}
