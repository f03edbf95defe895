#!/usr/bin/env node
/**
 * Builds the browser bundles (bundles.js) into `dist/`, each one IIFE for
 * ES2022 browsers (Chromium 94, Firefox 93, Safari 15.4 and later: native
 * class fields and private members), and measures them: `node
 * client/build.js` prints raw, gzip and brotli sizes, and fails when one is
 * over its budget. Their gzip budgets (bundles.js) are enforced by
 * client/test/bundle.test.js.
 *
 * esbuild bundles and minifies; terser minifies that again (two compress
 * passes, every top-level and private name mangled), which takes another
 * 3–5 % off gzipped, at a second or two of CPU each. Terser alone made
 * bundles 2.5–6 % smaller than esbuild's minifier; esbuild goes first all
 * the same, for two things terser does not do: it writes `let` for `const`,
 * and it names each class's private members afresh (`#t`, `#a`, … in every
 * class), where terser gives every private name in the bundle a name of its
 * own (two letters long once the one-letter names run out). Terser keeps a
 * name the same wherever it occurs, so the members of every class share the
 * same few short names. Together about 2 % smaller gzipped than terser alone
 * for the page scripts, whose classes keep their internals private, and
 * 0.6 % for the worker. So that the tests, which build the bundles many
 * times over, pay that once, a minified bundle is kept in
 * node_modules/.cache/maygh-client under the hash of what esbuild made and
 * of the minifier's version and options.
 */
import { build } from 'esbuild'
import { minify as terser } from 'terser'
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { dirname, join, relative } from 'node:path'
import { gzipSync, brotliCompressSync, constants } from 'node:zlib'
import { BUNDLES, GZIP_BUDGETS } from './bundles.js'

const here = dirname(fileURLToPath(import.meta.url))
const CACHE = join(here, '..', 'node_modules', '.cache', 'maygh-client')
/** @type {import('terser').MinifyOptions} */
const TERSER = { ecma: 2020, toplevel: true, compress: { passes: 2 }, mangle: true, format: { comments: false } }
const TERSER_KEY = JSON.stringify([createRequire(import.meta.url)('terser/package.json').version, TERSER])

/**
 * terser's output for `code`, from the cache when it has made it before.
 * @param {string} code esbuild's bundle
 * @returns {Promise<string>}
 */
async function minified (code) {
  const file = join(CACHE, createHash('sha256').update(TERSER_KEY).update(code).digest('hex') + '.js')
  try {
    return await readFile(file, 'utf8')
  } catch {}
  const out = (await terser(code, TERSER)).code ?? ''
  // A cache that cannot be written (a read-only tree) only costs the next build its time.
  await mkdir(CACHE, { recursive: true }).then(() => writeFile(file, out)).catch(() => {})
  return out
}

/**
 * @typedef {{ file: string, outfile: string, bytes: number, gzipBytes: number, brotliBytes: number }} Bundle
 * @param {{ outdir?: string, minify?: boolean }} [options]
 * @returns {Promise<{ outdir: string, bundles: Bundle[] }>}
 */
export async function buildClient ({ outdir = join(here, '..', 'dist'), minify = true } = {}) {
  await mkdir(outdir, { recursive: true })
  const bundles = await Promise.all(Object.entries(BUNDLES).map(async ([file, entry]) => {
    const outfile = join(outdir, file)
    const { outputFiles } = await build({
      entryPoints: [join(here, 'src', entry)],
      outfile,
      write: false,
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
      legalComments: 'none',
      minify,
      logLevel: 'warning'
    })
    const code = Buffer.from(minify ? await minified(outputFiles[0].text) : outputFiles[0].text)
    await writeFile(outfile, code)
    return {
      file,
      outfile,
      bytes: code.length,
      gzipBytes: gzipSync(code, { level: 9 }).length,
      brotliBytes: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
    }
  }))
  return { outdir, bundles }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // --quiet: say nothing unless a bundle is over its budget (for scripts that print JSON).
  const quiet = process.argv.includes('--quiet')
  const { bundles } = await buildClient()
  const kb = (/** @type {number} */ n) => (n / 1024).toFixed(1) + ' KB'
  for (const r of bundles) {
    const budget = GZIP_BUDGETS[/** @type {keyof typeof GZIP_BUDGETS} */ (r.file)]
    const line = `${relative(process.cwd(), r.outfile)}: ${kb(r.bytes)} raw, ${kb(r.gzipBytes)} gzip, ${kb(r.brotliBytes)} brotli (budget ${kb(budget)} gzip)`
    if (r.gzipBytes > budget) {
      console.error(`${line}: over budget`)
      process.exitCode = 1
    } else if (!quiet) console.log(line)
  }
}
