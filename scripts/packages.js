#!/usr/bin/env node
/**
 * The two packages this repository publishes, one for each kind of user:
 *
 *   maygh              a site owner's: the page script and its worker (dist/),
 *                      the module entry for sites that bundle, and the
 *                      manifest tool (maygh-manifest). One dependency
 *                      (idb-keyval, for the module entry's store).
 *   maygh-coordinator  an operator's: the coordinator (maygh-coordinator),
 *                      join tokens (maygh-token) and the simulator
 *                      (maygh-sim), with the server's dependencies (ws,
 *                      ioredis, pino, prom-client, chart.js for the dashboards).
 *
 * Neither package lists its files by hand: each holds exactly the modules its
 * entry points and bins reach (esbuild follows their imports; what they
 * import from npm becomes the package's dependencies, at the versions this
 * repository's package.json names), plus what a package ships beside code
 * (the built bundles, README, LICENSE). Both take this repository's version.
 *
 *   node scripts/packages.js pack [--out DIR]     build dist/, then write both tarballs to DIR
 *                                                 (default .packages/) and print them as JSON
 *   node scripts/packages.js publish [--dry-run]  pack, then `npm publish` each tarball
 *                                                 (`npm run release`; --dry-run passes through)
 */
import { build } from 'esbuild'
import { execFile } from 'node:child_process'
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { buildClient } from '../client/build.js'
import { BUNDLES } from '../client/bundles.js'

const run = promisify(execFile)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * @typedef {object} PackageSpec
 * @property {string} description
 * @property {string[]} entries modules the package's users start from (bins, exports): every module they
 *   reach is packed, worker threads they start included
 * @property {string[]} [also] files packed beside the code
 * @property {string[]} [runtime] npm packages read at run time without an import (a file of theirs served or inlined)
 * @property {Record<string, string>} bin
 * @property {Record<string, string>} exports
 * @property {string} readme this package's README, from packages/
 */

/** @type {Record<string, PackageSpec>} */
export const PACKAGES = {
  maygh: {
    description: 'Maygh for a site: the page script and service worker that let a site\'s visitors serve its static assets to each other over WebRTC, verified by SHA-256, and the manifest tool.',
    entries: ['client/src/module.js', 'client/manifest.js', 'client/bin/maygh-manifest.js'],
    also: Object.keys(BUNDLES).map((file) => `dist/${file}`),
    bin: { 'maygh-manifest': 'client/bin/maygh-manifest.js' },
    exports: {
      '.': './client/src/module.js',
      './dist/*': './dist/*',
      './manifest': './client/manifest.js',
      './package.json': './package.json'
    },
    readme: 'packages/maygh.md'
  },
  'maygh-coordinator': {
    description: 'Maygh\'s coordinator: introduces a site\'s visitors to each other for WebRTC, on memory, Redis or a Redis Cluster; with join tokens, metrics, a savings dashboard and a simulator of the savings on your access logs.',
    entries: [
      'coordinator/src/server.js',
      'coordinator/src/join-token.js',
      'coordinator/bin/maygh-coordinator.js',
      'coordinator/bin/maygh-token.js',
      'sim/bin/maygh-sim.js'
    ],
    runtime: ['chart.js'],
    bin: {
      'maygh-coordinator': 'coordinator/bin/maygh-coordinator.js',
      'maygh-token': 'coordinator/bin/maygh-token.js',
      'maygh-sim': 'sim/bin/maygh-sim.js'
    },
    exports: {
      '.': './coordinator/src/server.js',
      './token': './coordinator/src/join-token.js',
      './package.json': './package.json'
    },
    readme: 'packages/maygh-coordinator.md'
  }
}

/**
 * The repository's modules that `entries` reach, and the npm packages they
 * import. Worker threads started by URL (`new URL('./x.js', import.meta.url)`)
 * count as imports: their modules are followed too.
 * @param {string[]} entries paths from the repository's root
 * @returns {Promise<{ modules: string[], imports: string[] }>}
 */
export async function reach (entries) {
  const starts = new Set(entries)
  for (;;) {
    const { metafile } = await build({
      entryPoints: [...starts].map((e) => join(root, e)),
      bundle: true,
      write: false,
      outdir: join(root, '.packages', 'unused'),
      platform: 'node',
      format: 'esm',
      packages: 'external',
      metafile: true,
      logLevel: 'silent'
    })
    const modules = Object.keys(metafile.inputs).map((p) => relative(root, join(root, p))).sort()
    const before = starts.size
    for (const module of modules) {
      const source = await readFile(join(root, module), 'utf8')
      for (const [, url] of source.matchAll(/new URL\('(\.{1,2}\/[^']+\.js)', import\.meta\.url\)/g)) starts.add(relative(root, join(root, dirname(module), url)))
    }
    if (starts.size > before) continue
    const imports = new Set()
    for (const input of Object.values(metafile.inputs)) {
      for (const i of input.imports) {
        if (!i.external || i.path.startsWith('node:')) continue
        imports.add(i.path.startsWith('@') ? i.path.split('/').slice(0, 2).join('/') : i.path.split('/')[0])
      }
    }
    return { modules, imports: [...imports].sort() }
  }
}

/**
 * Lay one package out in `dir`: its files, README, LICENSE and package.json.
 * @param {string} name
 * @param {string} dir emptied first
 * @returns {Promise<{ files: string[], dependencies: Record<string, string> }>}
 */
export async function assemble (name, dir) {
  const spec = PACKAGES[name]
  const ours = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  const { modules, imports } = await reach(spec.entries)
  /** @type {Record<string, string>} */
  const dependencies = {}
  for (const dep of [...imports, ...spec.runtime ?? []].sort()) {
    const range = ours.dependencies?.[dep]
    if (!range) throw new Error(`${name}: ${dep} is imported but not a dependency in package.json`)
    dependencies[dep] = range
  }
  await rm(dir, { recursive: true, force: true })
  const files = [...modules, ...spec.also ?? []]
  for (const file of files) await cp(join(root, file), join(dir, file))
  await cp(join(root, spec.readme), join(dir, 'README.md'))
  await cp(join(root, 'LICENSE'), join(dir, 'LICENSE'))
  const manifest = {
    name,
    version: ours.version,
    description: spec.description,
    keywords: ours.keywords,
    license: ours.license,
    type: 'module',
    engines: ours.engines,
    bin: spec.bin,
    exports: spec.exports,
    dependencies
  }
  await writeFile(join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n')
  return { files, dependencies }
}

/**
 * Build the bundles, lay out both packages under `out` and `npm pack` each there.
 * @param {string} out
 * @returns {Promise<Record<string, { tarball: string, files: string[], dependencies: Record<string, string> }>>}
 */
export async function pack (out) {
  await mkdir(out, { recursive: true })
  await buildClient()
  /** @type {Record<string, { tarball: string, files: string[], dependencies: Record<string, string> }>} */
  const packed = {}
  for (const name of Object.keys(PACKAGES)) {
    const dir = join(out, name)
    const { dependencies } = await assemble(name, dir)
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: dir, maxBuffer: 16 << 20 })
    const [info] = JSON.parse(stdout)
    packed[name] = { tarball: join(out, info.filename), files: info.files.map((/** @type {{ path: string }} */ f) => f.path).sort(), dependencies }
  }
  return packed
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, ...rest] = process.argv.slice(2)
  const at = rest.indexOf('--out')
  const out = at >= 0 ? rest[at + 1] : join(root, '.packages')
  if (command === 'pack') {
    const packed = await pack(out)
    console.log(JSON.stringify(Object.fromEntries(Object.entries(packed).map(([name, p]) => [name, { tarball: p.tarball, files: p.files.length, dependencies: p.dependencies }])), null, 2))
  } else if (command === 'publish') {
    const packed = await pack(out)
    for (const [name, { tarball }] of Object.entries(packed)) {
      console.log(`publishing ${name} (${relative(process.cwd(), tarball)})`)
      await run('npm', ['publish', tarball, ...rest.filter((a) => a === '--dry-run')], { maxBuffer: 16 << 20 }).then(({ stdout, stderr }) => process.stdout.write(stdout + stderr))
    }
  } else {
    console.error('usage: node scripts/packages.js pack [--out DIR] | publish [--dry-run]')
    process.exitCode = 2
  }
}
