#!/usr/bin/env node
/**
 * Builds the browser bundles (bundles.js) into `dist/`, each one
 * IIFE, ES2020, and measures them: `node client/build.js` prints raw, gzip
 * and brotli sizes, and fails when one is over its budget.
 * Their gzip budgets (bundles.js) are enforced by client/test/bundle.test.js.
 */
import { build } from 'esbuild'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { dirname, join, relative } from 'node:path'
import { gzipSync, brotliCompressSync, constants } from 'node:zlib'
import { BUNDLES, GZIP_BUDGETS } from './bundles.js'

const here = dirname(fileURLToPath(import.meta.url))

/**
 * @typedef {{ file: string, outfile: string, bytes: number, gzipBytes: number, brotliBytes: number }} Bundle
 * @param {{ outdir?: string, minify?: boolean }} [options]
 * @returns {Promise<{ outdir: string, bundles: Bundle[] }>}
 */
export async function buildClient ({ outdir = join(here, '..', 'dist'), minify = true } = {}) {
  const bundles = await Promise.all(Object.entries(BUNDLES).map(async ([file, entry]) => {
    const outfile = join(outdir, file)
    await build({
      entryPoints: [join(here, 'src', entry)],
      outfile,
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      minify,
      legalComments: 'none',
      logLevel: 'warning'
    })
    const code = await readFile(outfile)
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
  // --quiet (npm's prepack): say nothing unless a bundle is over its budget, so `npm pack --json` stays JSON.
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
