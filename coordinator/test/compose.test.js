/**
 * The container files, checked offline and then run: docker-compose accepts
 * docker-compose.yml (and the single-Redis override) and reads it as the
 * local runner does; every environment variable set is one a program reads;
 * the Dockerfile is multi-stage, non-root, health-checked; and the topology,
 * started as local processes (test/support/compose-topology.js), lets a peer
 * on coordinator-3 find and signal a peer on coordinator-1.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join, posix } from 'node:path'
import { promisify } from 'node:util'
import { sriHash } from '../../client/manifest.js'
import { DEMO_ENV } from '../../demo-site/bin/maygh-demo.js'
import { DEFAULTS } from '../src/config.js'
import { addressTranslator } from '../../test/support/compose-addresses.js'
import { interpolate, loadCompose, readDockerfile } from '../../test/support/compose-files.js'
import { reach } from '../../scripts/packages.js'
import { PROGRAMS, REPO_ROOT, startMayghCompose } from '../../test/support/compose-topology.js'
import { TestClient } from '../../test/support/test-client.js'

const run = promisify(execFile)
const BASE = ['docker-compose.yml']
const SINGLE_REDIS = ['docker-compose.yml', 'docker-compose.single-redis.yml']
const NO_COMPOSE = spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).error
  ? 'docker-compose is not installed (scripts/install-system-deps.sh installs it as root)'
  : false

/**
 * @param {string[]} files
 * @param {string[]} args
 * @returns {Promise<string>} docker-compose's stdout; rejects on a non-zero exit
 */
async function dockerCompose (files, args) {
  // No MAYGH_PUBLIC_HOST and no COMPOSE_*: the file's own defaults, as the runner reads them.
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() }
  const { stdout } = await run('docker-compose', [...files.flatMap((f) => ['-f', f]), ...args], { cwd: REPO_ROOT, env })
  return stdout
}

/**
 * The environment variables a program reads, from its source: the coordinator's
 * options table (coordinator/src/cli-options.js) and `process.env.X` in its bin;
 * the demo's DEMO_ENV.
 * @returns {Promise<Record<string, { env: Set<string>, flagEnv: Map<string, string> }>>} program path → names, flag → env name
 */
async function programEnv () {
  // The table itself once cli-options.js exports it; until then, its text.
  const exported = /** @type {Record<string, [string, string, unknown]> | undefined} */ (/** @type {Record<string, any>} */ (await import('../src/cli-options.js')).OPTIONS)
  const cliOptions = await readFile(join(REPO_ROOT, 'coordinator/src/cli-options.js'), 'utf8')
  const flagEnv = exported
    ? new Map(Object.entries(exported).map(([flag, [, env]]) => [flag, env]))
    : new Map([...cliOptions.matchAll(/^\s*'?([\w-]+)'?:\s*\[\s*'\w+',\s*'([A-Z][A-Z0-9_]*)'/gm)].map(([, flag, env]) => [flag, env]))
  const bin = await readFile(join(REPO_ROOT, PROGRAMS.coordinator), 'utf8')
  const binEnv = [...bin.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map(([, name]) => name)
  assert.ok(flagEnv.get('redis-url') === 'REDIS_URL' && flagEnv.size >= 8, 'the options table of cli-options.js still parses')
  return {
    [PROGRAMS.coordinator]: { env: new Set([...flagEnv.values(), ...binEnv]), flagEnv },
    [PROGRAMS.demo]: { env: new Set(Object.keys(DEMO_ENV)), flagEnv: new Map() }
  }
}

describe('docker-compose files, offline', () => {
  test('docker-compose config -q accepts docker-compose.yml and the single-Redis override, and rejects a broken copy', { skip: NO_COMPOSE }, async () => {
    await dockerCompose(BASE, ['config', '-q'])
    await dockerCompose(SINGLE_REDIS, ['config', '-q'])
    const dir = await mkdtemp(join(tmpdir(), 'maygh-compose-'))
    try {
      const broken = join(dir, 'broken.yml')
      await writeFile(broken, (await readFile(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')).replace('restart: "no"', 'restart: "no"\n    no_such_key: 1'))
      await assert.rejects(dockerCompose([broken], ['config', '-q']), /no_such_key/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  for (const files of [BASE, SINGLE_REDIS]) {
    test(`docker-compose and the local runner read ${files.join(' + ')} alike`, { skip: NO_COMPOSE }, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'maygh-compose-'))
      try {
        const resolved = join(dir, 'resolved.yml')
        await writeFile(resolved, await dockerCompose(files, ['config']))
        const theirs = await loadCompose([resolved])
        const ours = await loadCompose(files.map((f) => join(REPO_ROOT, f)))
        assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort())
        const comparable = (/** @type {import('../../test/support/compose-files.js').ComposeService} */ s) => ({
          ...s, build: s.build !== undefined, ports: s.ports.map((p) => `${p.published}:${p.target}/${p.protocol}`).sort()
        })
        for (const name of Object.keys(ours)) assert.deepEqual(comparable(ours[name]), comparable(theirs[name]), name)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  }

  test('every environment variable compose or the image sets is one its program reads, and no flag in the command overrides it', async () => {
    const programs = await programEnv()
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    for (const files of [BASE, SINGLE_REDIS]) {
      const services = await loadCompose(files.map((f) => join(REPO_ROOT, f)))
      for (const [name, service] of Object.entries(services)) {
        const builtHere = service.build !== undefined
        const command = service.command ?? (builtHere ? image.cmd : undefined) ?? []
        const env = { ...(builtHere ? image.env : {}), ...service.environment }
        const program = Object.keys(programs).find((p) => command.includes(p))
        if (program === undefined) {
          assert.deepEqual(env, {}, `${name} sets environment variables, but runs none of ${Object.values(PROGRAMS).join(', ')}`)
          continue
        }
        const { env: reads, flagEnv } = programs[program]
        for (const key of Object.keys(env)) assert.ok(reads.has(key), `${name} sets ${key}, which ${program} does not read`)
        for (const arg of command.filter((a) => a.startsWith('--'))) {
          const shadowed = flagEnv.get(arg.slice(2).split('=')[0])
          assert.ok(shadowed === undefined || !(shadowed in env), `${name} sets ${shadowed}, but ${arg} in its command wins`)
        }
      }
    }
  })

  test('every coordinator hands out a PUBLIC_URL of its own, on the host port published for its WebSocket port', async () => {
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    for (const files of [BASE, SINGLE_REDIS]) {
      const services = await loadCompose(files.map((f) => join(REPO_ROOT, f)))
      const urls = new Set()
      for (const [name, service] of Object.entries(services)) {
        const command = service.command ?? (service.build !== undefined ? image.cmd : undefined) ?? []
        if (!command.includes(PROGRAMS.coordinator)) continue
        const env = { ...(service.build !== undefined ? image.env : {}), ...service.environment }
        const url = env.PUBLIC_URL
        assert.ok(url !== undefined, `${name} sets no PUBLIC_URL: other coordinators would hand out its address inside the network`)
        const listens = Number(env.PORT ?? DEFAULTS.port)
        const published = service.ports.find((p) => p.protocol === 'tcp' && p.target === listens)?.published
        assert.ok(published !== undefined, `${name} publishes no host port for ${listens}/tcp`)
        assert.equal(new URL(url).port, String(published), `${name}: PUBLIC_URL ${url} is not on its published port ${published}`)
        assert.ok(!urls.has(url), `${name} shares PUBLIC_URL ${url} with another coordinator`)
        urls.add(url)
      }
      assert.equal(urls.size, 3, `${files.join(' + ')}: three coordinators`)
    }
  })

  test('every long-running service has a health check; one-shots are waited for to complete', async () => {
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    const services = await loadCompose([join(REPO_ROOT, 'docker-compose.yml')])
    const oneShots = new Set(Object.values(services).flatMap((s) => Object.entries(s.depends_on).filter(([, d]) => d.condition === 'service_completed_successfully').map(([n]) => n)))
    assert.deepEqual([...oneShots], ['redis-cluster-init'])
    for (const [name, service] of Object.entries(services)) {
      if (oneShots.has(name)) continue
      const check = service.healthcheck ?? (service.build !== undefined ? image.healthcheck : undefined)
      assert.ok(check !== undefined && check[0] !== 'NONE', `${name} has no health check`)
    }
  })

  test('the Dockerfile: multi-stage, non-root, health-checked on /healthz, exposes the coordinator\'s ports, copies what exists', async () => {
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    assert.ok(image.stages.length >= 3, 'deps, build and runtime stages')
    assert.equal(image.user, 'node')
    assert.match(String(image.healthcheck), /\/healthz/)
    const exposed = image.expose.map((p) => `${p.target}/${p.protocol}`)
    assert.ok(exposed.includes(`${DEFAULTS.port}/tcp`) && exposed.includes(`${DEFAULTS.stunPort}/udp`), `EXPOSE ${exposed} lacks the default ports`)
    assert.deepEqual(image.cmd, ['node', PROGRAMS.coordinator], 'no flags: every setting, HOST included, comes from the environment')
    assert.equal(image.env.HOST, '0.0.0.0', 'listens on every interface unless HOST says otherwise')
    // The base: the Node.js major the project runs on (.node-version, engines), pinned by digest.
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? ''
    const major = (await readFile(join(REPO_ROOT, '.node-version'), 'utf8')).trim().split('.')[0]
    assert.match(base, new RegExp(`^node:${major}-bookworm-slim@sha256:[0-9a-f]{64}$`), 'the base image: node, pinned by digest')
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'))
    assert.equal(pkg.engines.node, `>=${major}`, 'engines names the same major')
    const ignored = (await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    for (const source of image.copySources) {
      assert.ok(existsSync(join(REPO_ROOT, source)), `COPY ${source}: no such path`)
      const hit = ignored.find((p) => p.startsWith('**/') ? source.split('/').includes(p.slice(3)) : source === p || source.startsWith(`${p}/`))
      assert.equal(hit, undefined, `COPY ${source} is excluded by .dockerignore (${hit})`)
    }
  })

  test('the image holds every module its programs import (a move to a new folder needs a COPY)', async () => {
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    const ignored = (await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    const excluded = (/** @type {string} */ path) => ignored.some((p) => p.startsWith('**/') ? path.split('/').includes(p.slice(3)) : path === p || path.startsWith(`${p}/`))
    // where each COPY of the runtime stage puts its sources in the image, repository-relative (WORKDIR is the repository's root)
    const placed = image.copies.flatMap(({ from, sources, dest }) => sources.map((source) => {
      const into = posix.normalize(dest.endsWith('/') || sources.length > 1 ? posix.join(dest, basename(source)) : dest)
      return { from, source: from === undefined ? source : posix.relative(image.workdir, source), into }
    }))
    const inImage = (/** @type {string} */ path) => placed.some(({ from, source, into }) =>
      into === source && (path === into || path.startsWith(`${into}/`)) && (from !== undefined || !excluded(path)))
    // every repository file the programs reach through static and literal dynamic imports (packages are the image's npm ci)
    const { modules } = await reach([...new Set([PROGRAMS.coordinator, PROGRAMS.demo, /** @type {string[]} */ (image.cmd)[1]])])
    assert.ok(modules.some((m) => m.startsWith('protocol/')) && modules.some((m) => m.startsWith('demo-site/src/')), 'the import graph was walked')
    assert.deepEqual(modules.filter((m) => !inImage(m)), [], 'imported by the image\'s programs but not copied into it')
  })

  test('compose interpolation and the address translation rule', () => {
    assert.equal(interpolate('a $$b ${X:-d} ${Y} $Y ${Z-e}', { Y: 'y', Z: '' }, 't'), 'a $b d y y ') // eslint-disable-line no-template-curly-in-string
    const translate = addressTranslator({
      'redis-1': [{ target: 6379, protocol: 'tcp', local: 50001 }],
      c1: [{ target: 7070, protocol: 'tcp', published: 7071, local: 50002 }, { target: 3478, protocol: 'udp', published: 3478, local: 50003 }],
      c2: [{ target: 7070, protocol: 'tcp', published: 7072, local: 50004 }, { target: 3478, protocol: 'udp', published: 3479, local: 50005 }],
      demo: [{ target: 8080, protocol: 'tcp', published: 8080, local: 50006 }]
    })
    assert.equal(translate('c1', 'redis+cluster://redis-1:6379,redis-1:6380'), 'redis+cluster://127.0.0.1:50001,redis-1:6380', 'a service port; an unknown one stays')
    assert.equal(translate('c1', 'stun:127.0.0.1:3478'), 'stun:127.0.0.1:50003', 'loopback inside a container is the container')
    assert.equal(translate('c2', 'stun:127.0.0.1:3479'), 'stun:127.0.0.1:50005', 'a published host port')
    assert.equal(translate('demo', 'ws://localhost:7071'), 'ws://127.0.0.1:50002')
    assert.equal(translate('c1', '7070'), '50002')
    assert.equal(translate('c1', '6379'), '6379', 'a bare number is only ever the service\'s own port')
    assert.equal(translate('c1', '0.0.0.0'), '127.0.0.1')
    assert.equal(translate('c1', 'c2'), 'c2', 'a bare name is a value (SHARD_ID), not a host')
    assert.throws(() => addressTranslator({ s: [{ target: 1, protocol: 'tcp', local: 2 }, { target: 1, protocol: 'udp', local: 3 }] }), /share a number/)
  })
})

describe('docker-compose.yml as local processes: Redis Cluster, three coordinators, the demo shop', () => {
  /** @type {Awaited<ReturnType<typeof startMayghCompose>>} */
  let compose
  before(async () => { compose = await startMayghCompose({ files: BASE }) }, { timeout: 120000 })
  after(async () => { await compose?.close() })

  test('each coordinator runs the image\'s CMD with its compose environment and answers /healthz', async () => {
    const image = await readDockerfile(join(REPO_ROOT, 'Dockerfile'))
    assert.deepEqual(compose.coordinators.map((c) => c.service), ['coordinator-1', 'coordinator-2', 'coordinator-3'])
    for (const c of compose.coordinators) {
      const plan = compose.topology.plans[c.service]
      assert.deepEqual(plan.argv.slice(1), /** @type {string[]} */ (image.cmd).slice(1).map((a) => compose.topology.translate(c.service, a)))
      assert.match(plan.env.REDIS_URL, /^redis\+cluster:\/\/(127\.0\.0\.1:\d+,){5}127\.0\.0\.1:\d+$/)
      const health = await (await fetch(`${c.httpUrl}/healthz`)).json()
      assert.equal(health.ok, true)
      assert.ok(String(health.shard).startsWith(c.shardId), `shard ${health.shard} is named after SHARD_ID ${c.shardId}`)
    }
  })

  test('a peer on coordinator-3 finds the asset on a peer of coordinator-1 and signals it', async () => {
    const [first, , third] = compose.coordinators
    const asset = sriHash(Buffer.from('compose topology asset'))
    const a = await TestClient.open(first.url)
    const b = await TestClient.open(third.url)
    try {
      const { id: idA } = await a.join([asset])
      const { id: idB } = await b.join()
      assert.deepEqual((await b.request({ type: 'lookup', hash: asset })).peers, [idA])
      const signal = { cid: 'compose', sdp: { type: 'offer', sdp: 'o' } }
      const relayed = await b.request({ type: 'connect', to: idA, signal })
      assert.deepEqual({ type: relayed.type, to: relayed.to }, { type: 'relayed', to: idA })
      assert.deepEqual(await a.next(), { type: 'connect', from: idB, signal, introduced: true })
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  test('the demo shop sends browsers to coordinator-1 and serves the client', async () => {
    const page = await (await fetch(`${compose.demoUrl}/`)).text()
    assert.ok(page.includes(`data-coordinator="${compose.coordinators[0].url}"`), 'the page names coordinator-1\'s local URL')
    assert.equal((await fetch(`${compose.demoUrl}/maygh.js`)).status, 200)
  })

  test('every process stops cleanly on SIGTERM', async () => {
    const exits = await compose.close()
    assert.equal(Object.keys(exits).length, 11, 'six Redis nodes, the init step, three coordinators, the shop')
    for (const [name, exit] of Object.entries(exits)) assert.deepEqual(exit, { code: 0, signal: null }, name)
  })
})

describe('docker-compose.yml + docker-compose.single-redis.yml as local processes', () => {
  test('one Redis serves all three coordinators; redis-2..6 do not start', { timeout: 120000 }, async () => {
    const compose = await startMayghCompose({ files: SINGLE_REDIS })
    let exits
    try {
      for (const c of compose.coordinators) assert.match(compose.topology.plans[c.service].env.REDIS_URL, /^redis:\/\/127\.0\.0\.1:\d+$/)
      const [first, second] = compose.coordinators
      const asset = sriHash(Buffer.from('single redis asset'))
      const a = await TestClient.open(first.url)
      const b = await TestClient.open(second.url)
      try {
        const { id: idA } = await a.join([asset])
        await b.join()
        assert.deepEqual((await b.request({ type: 'lookup', hash: asset })).peers, [idA])
      } finally {
        await Promise.all([a.close(), b.close()])
      }
    } finally {
      exits = await compose.close()
    }
    assert.deepEqual(Object.keys(exits).sort(), ['coordinator-1', 'coordinator-2', 'coordinator-3', 'demo', 'redis-1', 'redis-cluster-init'])
  })
})
