/**
 * Generates the demo shop's static assets: one PNG "product photo" per
 * catalogue entry (sizes spread over 12–285 KB, about 3.4 MB in all) plus the
 * shop's CSS and JS. Output is byte-for-byte reproducible: every random choice
 * comes from a seeded PRNG, and zlib is deterministic for a given input/level.
 *
 * The files land in `demo-site/.generated/public/` (gitignored) with a stamp;
 * {@link ensureGenerated} rebuilds them when they are missing, incomplete, or
 * were made by another generator version.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCatalog } from './catalog.js'
import { encodePng } from './png.js'
import { drawProduct } from './product-art.js'

/** Bump when the pictures or the layout of the output change. */
export const GENERATOR_VERSION = 1
export const DEFAULT_PUBLIC_DIR = fileURLToPath(new URL('../.generated/public', import.meta.url))
export const STAMP_FILE = '.generator-stamp' // no extension: buildManifest skips it

const SOURCES_DIR = fileURLToPath(new URL('../assets', import.meta.url))
/** Hand-written assets copied verbatim: source file → URL path. */
const STATIC_SOURCES = Object.freeze({ 'shop.css': '/static/shop.css', 'shop.js': '/static/shop.js' })

const GRAIN_AMPLITUDE = 12
/** Empirical (Sub filter, zlib level 6): grain at density d adds about 4.45 bytes × pixels × d^0.9. */
const GRAIN_COST = { bytesPerPixel: 4.45, exponent: 0.9 }
const HARD_LIMITS = { min: 10.5 * 1024, max: 295 * 1024 }

/**
 * Encode one product's picture, adjusting the grain density until the PNG is
 * within 12 % of the product's target size (the model above, refit after each try).
 *
 * @param {import('./catalog.js').Product} product
 * @returns {Buffer}
 */
export function renderProductImage (product) {
  const img = drawProduct(product)
  const encode = (/** @type {number} */ density) => encodePng(img.width, img.height, img.withGrain(product.seed, density, GRAIN_AMPLITUDE))
  const base = encode(0)
  const target = product.targetBytes
  if (base.length >= target * 0.88 && base.length <= HARD_LIMITS.max) return base
  let scale = GRAIN_COST.bytesPerPixel * img.width * img.height
  let best = base
  for (let attempt = 0; attempt < 8; attempt++) {
    const density = Math.min(1, Math.max(0, (target - base.length) / scale) ** (1 / GRAIN_COST.exponent))
    const png = encode(density)
    if (Math.abs(png.length - target) < Math.abs(best.length - target)) best = png
    if (Math.abs(png.length - target) <= target * 0.12) break
    scale = Math.max(1, (png.length - base.length) / density ** GRAIN_COST.exponent)
  }
  if (best.length < HARD_LIMITS.min || best.length > HARD_LIMITS.max) {
    throw new RangeError(`${product.path}: ${best.length} bytes, outside the demo's 10–300 KB range`)
  }
  return best
}

/**
 * @typedef {{ path: string, bytes: Buffer }} GeneratedAsset
 */

/**
 * Every asset, in memory: the product pictures and the static files.
 *
 * @param {{ catalog?: import('./catalog.js').Product[] }} [options]
 * @returns {Promise<GeneratedAsset[]>}
 */
export async function generateAssets (options = {}) {
  const catalog = options.catalog ?? buildCatalog()
  /** @type {GeneratedAsset[]} */
  const assets = catalog.map((product) => ({ path: product.path, bytes: renderProductImage(product) }))
  for (const [file, path] of Object.entries(STATIC_SOURCES)) {
    assets.push({ path, bytes: await readFile(join(SOURCES_DIR, file)) })
  }
  return assets
}

/** The generator's own source files: editing any of them makes the output stale. */
const GENERATOR_SOURCES = ['images.js', 'catalog.js', 'product-art.js', 'raster.js', 'png.js']
  .map((f) => fileURLToPath(new URL(f, import.meta.url)))

/**
 * What the stamp must say for the output to be current: the generator version
 * and a hash of the generator's code and the hand-written assets, so that editing
 * shop.css or a drawing routine regenerates without anyone bumping a number.
 *
 * @returns {Promise<string>}
 */
async function expectedVersion () {
  const hash = createHash('sha256')
  for (const file of [...GENERATOR_SOURCES, ...Object.keys(STATIC_SOURCES).map((f) => join(SOURCES_DIR, f))]) {
    hash.update(await readFile(file))
  }
  return `${GENERATOR_VERSION}:${hash.digest('hex').slice(0, 16)}`
}

/**
 * Whether `dir` holds a complete, current generation.
 *
 * @param {string} dir
 * @param {string} version
 * @returns {Promise<boolean>}
 */
async function isCurrent (dir, version) {
  try {
    const stamp = JSON.parse(await readFile(join(dir, STAMP_FILE), 'utf8'))
    if (stamp.version !== version) return false
    for (const [path, size] of Object.entries(stamp.files)) {
      if ((await stat(join(dir, path))).size !== size) return false
    }
    return true
  } catch {
    return false
  }
}

/**
 * Make sure `dir` holds the current assets, generating them if not.
 *
 * Generation writes to a temporary sibling and renames it into place, so
 * concurrent callers (parallel test files, a server and a test) never see a
 * half-written tree; the stamp is written last.
 *
 * @param {string} [dir]
 * @returns {Promise<{ dir: string, generated: boolean }>}
 */
export async function ensureGenerated (dir = DEFAULT_PUBLIC_DIR) {
  const version = await expectedVersion()
  if (await isCurrent(dir, version)) return { dir, generated: false }
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    /** @type {Record<string, number>} */
    const files = {}
    for (const { path, bytes } of await generateAssets()) {
      await mkdir(dirname(join(tmp, path)), { recursive: true })
      await writeFile(join(tmp, path), bytes)
      files[path] = bytes.length
    }
    await writeFile(join(tmp, STAMP_FILE), JSON.stringify({ version, files }, null, 2) + '\n')
    await mkdir(dirname(dir), { recursive: true })
    if (!(await renameInto(tmp, dir, version))) await rm(tmp, { recursive: true, force: true })
  } catch (err) {
    await rm(tmp, { recursive: true, force: true })
    throw err
  }
  return { dir, generated: true }
}

/**
 * Move a finished generation into place, replacing a stale one.
 *
 * @param {string} tmp
 * @param {string} dir
 * @param {string} version
 * @returns {Promise<boolean>} false when another process got there first with the same version
 */
async function renameInto (tmp, dir, version) {
  try {
    await rename(tmp, dir)
    return true
  } catch (err) {
    if (!['ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(/** @type {any} */ (err).code)) throw err
  }
  if (await isCurrent(dir, version)) return false
  const old = `${dir}.old-${process.pid}-${randomBytes(4).toString('hex')}`
  await rename(dir, old).catch(() => {})
  try {
    await rename(tmp, dir)
    return true
  } catch (err) {
    if (await isCurrent(dir, version)) return false
    throw err
  } finally {
    await rm(old, { recursive: true, force: true })
  }
}
