/**
 * The two packages as their users get them (scripts/packages.js): `maygh`, the
 * site owner's, and `maygh-coordinator`, the operator's, packed and each
 * installed into a scratch project of its own. The site owner's brings
 * neither the server's code nor its dependencies. The README's "Add it to
 * your site" steps are done with what was installed — the two files copied
 * next to the pages, the manifest made by the site package's bin, the
 * coordinator run by the operator package's — and the site served by an
 * ordinary static server. In real Chromium a second visitor gets the images
 * from the first. A page whose script is the module entry, bundled from the
 * scratch site by esbuild as a site's build would, starts the same client.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { REPO_ROOT } from '../support/compose-topology.js'
import { DEFAULT_PUBLIC_DIR, ensureGenerated } from '../../demo-site/src/images.js'
import { launchBrowser } from '../support/browsers.js'
import { startStaticSite } from '../support/static-site.js'
import { PACKAGES, pack } from '../../scripts/packages.js'

const run = promisify(execFile)
const IMAGES = ['/img/p01.png', '/img/p02.png', '/img/p03.png', '/img/p04.png']
/** what only the operator needs: none of it reaches a site owner */
const SERVER_DEPENDENCIES = ['ws', 'ioredis', 'pino', 'sonic-boom', 'prom-client', 'chart.js', 'cluster-key-slot']

/** @type {string} */
let tmp
/** @type {Awaited<ReturnType<typeof pack>>} */
let packed
/** @type {string} the site owner's project folder (the maygh package installed) */
let project
/** @type {string} the operator's project folder (maygh-coordinator installed) */
let operator
/** @type {import('node:child_process').ChildProcess | undefined} */
let coordinator
/** @type {Awaited<ReturnType<typeof startStaticSite>> | undefined} */
let site

/**
 * The installed coordinator bin, on a free port; resolves with its URL once it listens.
 * @returns {Promise<string>}
 */
function startInstalledCoordinator () {
  const child = coordinator = spawn(process.execPath, [join(operator, 'node_modules/.bin/maygh-coordinator'), '--port', '0', '--stun-port', '0'], { cwd: operator, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const url = /"url":"(ws:\/\/[^"]+)"/.exec(out)?.[1]
      if (url) resolve(url)
    })
    child.stderr.on('data', (d) => { out += d })
    child.once('exit', (code) => reject(new Error(`the installed coordinator exited (${code}): ${out}`)))
  })
}

/**
 * A scratch project with one of our tarballs installed. The tests have no network (a loopback-only
 * namespace), so the project's lockfile pins the tarball's dependencies, and theirs, to what this
 * repository's lockfile resolved, and `npm ci --offline` takes them from npm's cache, where installing
 * this repository put them.
 * @param {string} dir
 * @param {string} name the package
 * @returns {Promise<void>}
 */
async function installInto (dir, name) {
  const { tarball, dependencies } = packed[name]
  await mkdir(dir, { recursive: true })
  const file = `file:${tarball}`
  const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8'))
  /** @type {Record<string, any>} */
  const packages = {
    '': { name: 'scratch', dependencies: { [name]: file } },
    [`node_modules/${name}`]: { version: JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')).version, resolved: file, dependencies, bin: PACKAGES[name].bin }
  }
  // The dependencies' closure, as the repository's lockfile laid it out: a dependency of the package
  // at `from` is the nearest node_modules/<dep> at or above it (ioredis keeps a cluster-key-slot of its own).
  /** @type {[string, string, boolean][]} [from, dependency, optional] */
  const todo = Object.keys(dependencies).map((dep) => ['', dep, false])
  for (let next; (next = todo.pop()) !== undefined;) {
    const [from, dep, optional] = next
    let path = ''
    for (let at = from; ; at = at.slice(0, Math.max(0, at.lastIndexOf('/node_modules/')))) {
      path = `${at ? at + '/' : ''}node_modules/${dep}`
      if (lock.packages[path] || !at) break
    }
    if (packages[path]) continue
    const entry = lock.packages[path]
    if (!entry && optional) continue
    assert.ok(entry, `${dep} (for ${from || 'the package'}) is in the repository's lockfile`)
    packages[path] = entry
    for (const d of Object.keys(entry.dependencies ?? {})) todo.push([path, d, false])
    for (const d of Object.keys(entry.optionalDependencies ?? {})) todo.push([path, d, true])
  }
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies: { [name]: file } }))
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages }))
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, maxBuffer: 16 << 20 })
}

/**
 * The packages installed in a project, and their bytes on disk.
 * @param {string} dir
 */
async function installed (dir) {
  const names = []
  let bytes = 0
  /** @param {string} at */
  const walk = async (at) => {
    for (const e of await readdir(at, { withFileTypes: true })) {
      const path = join(at, e.name)
      if (e.isDirectory()) await walk(path)
      else if (e.isFile()) bytes += (await stat(path)).size
    }
  }
  for (const e of await readdir(join(dir, 'node_modules'))) {
    if (e.startsWith('.')) continue
    const scoped = e.startsWith('@') ? (await readdir(join(dir, 'node_modules', e))).map((s) => `${e}/${s}`) : [e]
    names.push(...scoped)
  }
  await walk(join(dir, 'node_modules'))
  return { names: names.sort(), bytes }
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'maygh-package-'))
  packed = await pack(join(tmp, 'packed'))
  project = join(tmp, 'shop')
  operator = join(tmp, 'ops')
  await installInto(project, 'maygh')
  await installInto(operator, 'maygh-coordinator')
  await mkdir(join(project, 'public', 'img'), { recursive: true })
})
after(async () => {
  coordinator?.kill()
  await site?.close()
  if (tmp) await rm(tmp, { recursive: true, force: true })
})

test('the site owner\'s package holds the built client, the manifest tool and what they import; the operator\'s the server, tokens and simulator; neither tests', () => {
  const site = packed.maygh.files
  for (const file of ['dist/maygh.js', 'dist/maygh-sw.js', 'dist/maygh-elements.js', 'client/src/module.js', 'client/bin/maygh-manifest.js', 'protocol/index.js', 'LICENSE', 'README.md']) {
    assert.ok(site.includes(file), `${file} is in maygh`)
  }
  assert.deepEqual(site.filter((f) => /^(coordinator|sim)\//.test(f)), [], 'maygh holds no server code')
  assert.deepEqual(Object.keys(packed.maygh.dependencies), ['idb-keyval'])
  const ops = packed['maygh-coordinator'].files
  for (const file of ['coordinator/bin/maygh-coordinator.js', 'coordinator/bin/maygh-token.js', 'sim/bin/maygh-sim.js', 'protocol/index.js', 'LICENSE', 'README.md']) {
    assert.ok(ops.includes(file), `${file} is in maygh-coordinator`)
  }
  assert.deepEqual(ops.filter((f) => /^(dist|client)\//.test(f)), [], 'maygh-coordinator holds no client code')
  assert.deepEqual(Object.keys(packed['maygh-coordinator'].dependencies).sort(), [...SERVER_DEPENDENCIES].sort())
  for (const files of [site, ops]) assert.deepEqual(files.filter((f) => /(^|\/)(test|bench|demo-site|swarm)\//.test(f)), [], 'no tests, benchmarks or demo')
})

test('installed, the site owner\'s package brings none of the server\'s dependencies', async () => {
  const shop = await installed(project)
  const ops = await installed(operator)
  assert.deepEqual(shop.names, ['idb-keyval', 'maygh'])
  for (const dep of SERVER_DEPENDENCIES) assert.ok(ops.names.includes(dep), `${dep} comes with maygh-coordinator`)
  assert.ok(shop.bytes < 1 << 20, `maygh installs ${shop.bytes} B`)
  assert.ok(shop.bytes * 5 < ops.bytes, `maygh ${shop.bytes} B, maygh-coordinator ${ops.bytes} B`)
})

test('the operator\'s installed simulator replays a log (its worker threads are in the package)', async () => {
  const log = join(operator, 'access.log')
  const line = (/** @type {number} */ i, /** @type {string} */ host) => `${host} - - [01/Jul/1995:00:00:${String(i).padStart(2, '0')} -0400] "GET /images/a.gif HTTP/1.0" 200 50000`
  await writeFile(log, Array.from({ length: 40 }, (_, i) => line(i, `h${i % 8}.example`)).join('\n') + '\n')
  const { stdout } = await run(join(operator, 'node_modules/.bin/maygh-sim'), ['--trace', log, '--json', '--no-progress'], { cwd: operator, maxBuffer: 16 << 20 })
  const result = JSON.parse(stdout)
  assert.equal(typeof result, 'object', stdout)
  assert.match(stdout, /"requests":\s*40\b/, 'all 40 requests replayed')
})

test('every bin of the installed packages runs (--help)', async () => {
  for (const [dir, bins] of /** @type {[string, string[]][]} */ ([[project, ['maygh-manifest']], [operator, ['maygh-coordinator', 'maygh-token', 'maygh-sim']]])) {
    for (const bin of bins) {
      const { stdout, stderr } = await run(join(dir, 'node_modules/.bin', bin), ['--help'], { cwd: dir })
      assert.match(stdout + stderr, /usage/i, `${bin} --help prints its usage`)
    }
  }
})

test('a site set up from the installed package: a second visitor gets the images from the first', { timeout: 180000 }, async () => {
  const pkg = join(project, 'node_modules', 'maygh')
  const pub = join(project, 'public')
  // Step 2: the page script and the worker, copied next to the pages.
  for (const f of ['maygh.js', 'maygh-sw.js']) await copyFile(join(pkg, 'dist', f), join(pub, f))
  await ensureGenerated()
  for (const path of IMAGES) await copyFile(join(DEFAULT_PUBLIC_DIR, path), join(pub, path))
  // Step 4: the coordinator, run by the operator package's bin.
  const coordinatorUrl = await startInstalledCoordinator()
  // Step 3: the script tag on each page (one of them starts the client from the module entry instead).
  const hedge = 'data-hedge-min-ms="10000" data-stall-ms="20000"'
  await writeFile(join(pub, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><title>Scratch shop</title>
<script src="/maygh.js" data-coordinator="${coordinatorUrl}" ${hedge} async></script></head>
<body>${IMAGES.map((src) => `<img src="${src}" alt="">`).join('\n')}</body></html>`)
  await writeFile(join(project, 'app.js'), `import { start } from 'maygh'\nstart({ coordinator: ${JSON.stringify(coordinatorUrl)}, hedgeMinMs: 10000, stallMs: 20000 })\n`)
  await build({ entryPoints: [join(project, 'app.js')], bundle: true, format: 'esm', outfile: join(pub, 'app.js'), absWorkingDir: project, logLevel: 'warning' })
  await writeFile(join(pub, 'about.html'), '<!doctype html><html><head><meta charset="utf-8"><title>About</title><script type="module" src="/app.js"></script></head><body>About us.</body></html>')
  // Step 5: the manifest, made by the installed bin (it leaves out itself and the client's files).
  await run(join(project, 'node_modules/.bin/maygh-manifest'), [pub, '--out', join(pub, 'maygh-manifest.json')], { cwd: project })
  const manifest = JSON.parse(await readFile(join(pub, 'maygh-manifest.json'), 'utf8'))
  assert.deepEqual(Object.keys(manifest.assets).sort(), ['/app.js', ...IMAGES].sort(), 'the assets, not the pages, the manifest or the client')

  site = await startStaticSite(pub)
  const browsers = [await launchBrowser('chromium'), await launchBrowser('chromium')]
  try {
    const [a, b] = await Promise.all(browsers.map(async (browser) => (await browser.newContext()).newPage()))
    const idle = (/** @type {import('playwright-core').Page} */ p) => p.evaluate(() => /** @type {any} */ (globalThis).Maygh.idle())
    const stats = (/** @type {import('playwright-core').Page} */ p) => p.evaluate(() => /** @type {any} */ (globalThis).Maygh.stats())
    const shown = (/** @type {import('playwright-core').Page} */ p) => p.$$eval('img', (imgs) => imgs.map((img) => /** @type {HTMLImageElement} */ (img).naturalWidth))

    await a.goto(site.url + '/')
    await idle(a)
    assert.equal((await stats(a)).held, IMAGES.length, 'the first visitor stored and announced the images it loaded')

    // The second visitor's first page starts the client from the bundled module entry and installs the worker.
    await b.goto(site.url + '/about.html')
    await idle(b)
    const before = site.bytesUnder('/img/')
    await b.goto(site.url + '/')
    await idle(b)
    for (const width of await shown(b)) assert.ok(width > 0, 'every image shows')
    const sb = await stats(b)
    assert.equal(sb.peer.count, IMAGES.length, `the images came from the first visitor (${JSON.stringify(sb)}; the first visitor's: ${JSON.stringify(await stats(a))})`)
    assert.equal(site.bytesUnder('/img/') - before, 0, 'the origin sent no image bytes for the second visitor')
  } finally {
    for (const browser of browsers) await browser.close()
  }
})
