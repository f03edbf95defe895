#!/usr/bin/env node
/**
 * The manifest's size on a site of 10,000 assets (issue 26): how much naming
 * large assets in pieces adds to what every new visitor fetches. Entries are
 * made as `maygh-manifest` makes them (client/manifest.js: path, SRI
 * SHA-256, size, type, and `pieces` above PIECED_ABOVE), their sizes drawn
 * from a lognormal around 12 kB (the Etsy-like model's photos, the
 * simulator's `etsy-params.js`) with a share of videos of 20–200 MB; names
 * are random digests (a name's length, not its value, sets the size). The
 * piece lists go beside the manifest (`maygh-pieces/`), fetched only by a
 * visitor who plays that video and finds no holder to give it; printed
 * beside them is what the manifest would weigh with the lists inline.
 *
 *   node bench/manifest-size.js [--assets 10000]
 */
import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { parseArgs } from 'node:util'
import { MANIFEST_VERSION, PIECED_ABOVE, pieceCount } from '../protocol/index.js'
import { contentType } from '../client/manifest.js'
import { Rng } from '../sim/src/rng.js'

const { values } = parseArgs({ options: { assets: { type: 'string', default: '10000' } } })
const n = Number(values.assets)
const sri = () => 'sha256-' + randomBytes(32).toString('base64')

/**
 * @param {number} videoShare of the assets, videos
 * @param {Rng} rng
 */
function site (videoShare, rng) {
  const random = () => rng.random()
  /** @type {Record<string, import('../client/manifest.js').ManifestEntry>} */
  const assets = {}
  /** @type {Record<string, string>} the lists, base64, as they would sit inline */
  const inline = {}
  let listBytes = 0
  let pieced = 0
  for (let i = 0; i < n; i++) {
    const video = random() < videoShare
    // A lognormal around 12 kB for photos; videos 20–200 MB.
    const z = rng.normal()
    const size = video ? Math.round(20e6 + random() * 180e6) : Math.max(200, Math.round(12000 * Math.exp(0.9 * z)))
    const path = video ? `/media/videos/${i}/clip-${i}.mp4` : `/img/listing/${Math.floor(i / 100)}/il_${i}_570xN.jpg`
    /** @type {import('../client/manifest.js').ManifestEntry} */
    const entry = assets[path] = { hash: sri(), size, type: contentType(path) }
    if (size > PIECED_ABOVE) {
      const list = randomBytes(32 * pieceCount(size))
      entry.pieces = sri()
      inline[path] = list.toString('base64')
      listBytes += list.length
      pieced++
    }
  }
  const text = JSON.stringify({ version: MANIFEST_VERSION, assets })
  const withLists = JSON.stringify({ version: MANIFEST_VERSION, assets: Object.fromEntries(Object.entries(assets).map(([p, e]) => [p, inline[p] ? { ...e, list: inline[p] } : e])) })
  return {
    videoShare,
    pieced,
    manifestBytes: text.length,
    manifestGzip: gzipSync(text).length,
    bytesPerAsset: +(text.length / n).toFixed(1),
    listsBeside: listBytes,
    inlineListsGzip: gzipSync(withLists).length
  }
}

const rows = [0, 0.001, 0.01, 0.1].map((share) => site(share, new Rng(1)))
console.log(JSON.stringify({ assets: n, rows }, null, 2))
