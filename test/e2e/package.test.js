/**
 * The package as a site owner gets it: `npm pack` (its `prepack` builds
 * `dist/`), installed into a scratch site's folder, the README's "Add it to
 * your site" steps done with what was installed — the two files copied next
 * to the pages, the manifest made and the coordinator run by the package's
 * bins — and the site served by an ordinary static server. In real Chromium a
 * second visitor gets the images from the first. A page whose script is the
 * module entry, bundled from the scratch site by esbuild as a site's build
 * would, starts the same client.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { REPO_ROOT } from '../support/compose-topology.js'
import { DEFAULT_PUBLIC_DIR, ensureGenerated } from '../../demo-site/src/images.js'
import { launchBrowser } from '../support/browsers.js'
import { startStaticSite } from '../support/static-site.js'

const run = promisify(execFile)
const IMAGES = ['/img/p01.png', '/img/p02.png', '/img/p03.png', '/img/p04.png']

/** @type {string} */
let tmp
/** @type {string} the scratch site's project folder */
let project
/** @type {{ file: string, files: string[] }} */
let packed
/** @type {import('node:child_process').ChildProcess | undefined} */
let coordinator
/** @type {Awaited<ReturnType<typeof startStaticSite>> | undefined} */
let site

/**
 * The installed package's coordinator bin, on a free port; resolves with its URL once it listens.
 * @returns {Promise<string>}
 */
function startInstalledCoordinator () {
  const child = coordinator = spawn(process.execPath, [join(project, 'node_modules/.bin/maygh-coordinator'), '--port', '0', '--stun-port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] })
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

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'maygh-package-'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: REPO_ROOT, maxBuffer: 16 << 20 })
  const [info] = JSON.parse(stdout)
  packed = { file: join(tmp, info.filename), files: info.files.map((/** @type {{ path: string }} */ f) => f.path) }

  // A site owner's project with the package installed from the tarball. The tests have no network (a
  // loopback-only namespace), so the project's lockfile pins the dependencies to what this repository's
  // lockfile resolved, and `npm ci --offline` takes them from npm's cache, where installing this repository put them.
  project = join(tmp, 'shop')
  await mkdir(join(project, 'public', 'img'), { recursive: true })
  const tarball = `file:../${info.filename}`
  const ours = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8'))
  const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8'))
  const packages = {
    '': { name: 'scratch-shop', dependencies: { maygh: tarball } },
    'node_modules/maygh': { version: ours.version, resolved: tarball, license: ours.license, dependencies: ours.dependencies, bin: ours.bin, engines: ours.engines },
    ...Object.fromEntries(Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && !entry.dev && !entry.link))
  }
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch-shop', private: true, type: 'module', dependencies: { maygh: tarball } }))
  await writeFile(join(project, 'package-lock.json'), JSON.stringify({ name: 'scratch-shop', lockfileVersion: 3, requires: true, packages }))
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, maxBuffer: 16 << 20 })
})
after(async () => {
  coordinator?.kill()
  await site?.close()
  if (tmp) await rm(tmp, { recursive: true, force: true })
})

test('the tarball holds the built client, the bins and the sources they need, and no tests', () => {
  for (const file of ['dist/maygh.js', 'dist/maygh-sw.js', 'dist/maygh-elements.js', 'client/src/module.js', 'client/bin/maygh-manifest.js',
    'coordinator/bin/maygh-coordinator.js', 'coordinator/bin/maygh-token.js', 'sim/bin/maygh-sim.js', 'LICENSE', 'README.md']) {
    assert.ok(packed.files.includes(file), `${file} is packed`)
  }
  assert.deepEqual(packed.files.filter((f) => /(^|\/)(test|bench|demo-site)\//.test(f)), [], 'no tests, benchmarks or demo')
})

test('every bin of the installed package runs (--help)', async () => {
  for (const bin of ['maygh-coordinator', 'maygh-manifest', 'maygh-token', 'maygh-sim']) {
    const { stdout, stderr } = await run(join(project, 'node_modules/.bin', bin), ['--help'], { cwd: project })
    assert.match(stdout + stderr, /usage/i, `${bin} --help prints its usage`)
  }
})

test('a site set up from the installed package: a second visitor gets the images from the first', { timeout: 180000 }, async () => {
  const pkg = join(project, 'node_modules', 'maygh')
  const pub = join(project, 'public')
  // Step 2: the page script and the worker, copied next to the pages.
  for (const f of ['maygh.js', 'maygh-sw.js']) await copyFile(join(pkg, 'dist', f), join(pub, f))
  await ensureGenerated()
  for (const path of IMAGES) await copyFile(join(DEFAULT_PUBLIC_DIR, path), join(pub, path))
  // Step 4: the coordinator, run by the installed bin.
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
    assert.equal(sb.peer.count, IMAGES.length, `the images came from the first visitor (${JSON.stringify(sb)})`)
    assert.equal(site.bytesUnder('/img/') - before, 0, 'the origin sent no image bytes for the second visitor')
  } finally {
    for (const browser of browsers) await browser.close()
  }
})
