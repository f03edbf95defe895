/**
 * The crowd's Node visitor (node-visitor.js) runs the client's own page-side
 * code over @roamhq/wrtc: a first page view loads from the origin and is
 * adopted (stored, announced); a later visitor's page takes those assets from
 * it over a data channel, verified; a visitor behind a NAT that cannot be
 * traversed falls back to the origin and quarantines nobody. Real coordinator,
 * real WebRTC, a static origin that counts what it serves.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startCoordinator } from '../../coordinator/src/server.js'
import { buildManifest } from '../../client/manifest.js'
import { startStaticSite } from '../../test/support/static-site.js'
import { NodeVisitor, installSite } from '../src/node-visitor.js'
import { Session } from '../../coordinator/src/session.js'

const IMAGES = ['/a.png', '/b.png', '/c.png', '/d.png']
/** what only the first visitor holds, for the untraversable one to ask for page by page */
const MORE = ['/e.png', '/f.png', '/g.png', '/h.png']

test('Node visitors share through the client\'s own code: first view adopted, second visitor served by peers, an untraversable one by the origin', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'maygh-node-visitor-'))
  for (const path of [...IMAGES, ...MORE]) writeFileSync(join(dir, path), randomBytes(60_000))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>page</title>')
  writeFileSync(join(dir, 'maygh-manifest.json'), JSON.stringify(await buildManifest(dir)))
  const site = await startStaticSite(dir)
  const coordinator = await startCoordinator({ port: 0, stunPort: 0 })
  installSite(site.url)
  // The origin is on loopback, as near as a peer: a wide hedge lets the peers answer first (mechanics, not savings).
  const data = { coordinator: coordinator.url, hedgeMinMs: '5000', hedgeMaxMs: '5000' }
  const visitors = /** @type {NodeVisitor[]} */ ([])
  const visitor = (/** @type {string} */ name, extra = {}) => {
    const v = new NodeVisitor({ site: site.url, name, data, ...extra })
    visitors.push(v)
    return v
  }
  const assets = IMAGES.map((url) => ({ url, media: false }))
  t.after(async () => {
    await Promise.all(visitors.map((v) => v.close()))
    await coordinator.close()
    await site.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const first = visitor('first')
  const seeded = await first.view('/index.html', assets)
  assert.equal(seeded.first, true)
  assert.deepEqual((seeded.assets ?? []).map((a) => a.source), ['origin', 'origin', 'origin', 'origin'])
  await first.synced()
  assert.equal(first.cache.hashes().length, 4, 'the first view is adopted into the store')

  const second = visitor('second')
  assert.equal((await second.view('/index.html', [])).first, true)
  // What the coordinator answers lookups, and the offers it hands on (protocol 3: a page's first lookup carries them).
  /** @type {any[]} */
  const replies = []
  /** @type {any[]} */
  const offers = []
  // Replies go out through send; relayed signals, serialised once, through sendText.
  const { send, sendText } = Session.prototype
  Session.prototype.send = function (/** @type {any} */ m) {
    if (m?.type === 'holders') replies.push(m)
    return send.call(this, m)
  }
  Session.prototype.sendText = function (/** @type {string} */ text) {
    const m = JSON.parse(text)
    if (m?.type === 'connect' && m.signal?.sdp?.type === 'offer') offers.push(m)
    return sendText.call(this, text)
  }
  const restore = () => Object.assign(Session.prototype, { send, sendText })
  t.after(restore)
  const shared = await second.view('/index.html', assets)
  restore()
  const offered = replies.flatMap((r) => Object.entries(r.offered ?? {}))
  assert.equal(offered.length, 1, 'the page\'s first lookup handed one offer to the one holder')
  assert.deepEqual(offers.map((o) => [o.from === second.page?.api.stats().peerId, o.signal.cid]), [[true, offered[0][1]]], 'and no other offer was made: the channel opened on it')
  assert.equal(shared.first, false)
  // (With what the page counted, should it ever fail: its errors say why peers gave up.)
  assert.deepEqual((shared.assets ?? []).map((a) => a.source), ['peer', 'peer', 'peer', 'peer'], JSON.stringify(second.page?.stats.counts))
  for (const path of IMAGES) assert.equal(site.served.get(path)?.requests, 1, `${path} left the origin once`)
  assert.equal(second.page?.stats.counts.peer.bytes, 4 * 60_000)
  assert.deepEqual(second.page?.stats.counts.errors, {}, 'every signal reached its peer (the bound offer\'s candidates too)')

  // Behind a NAT nobody can reach: every image from the origin, and the holders it tried stay listed.
  const stuck = visitor('stuck', { untraversable: true })
  await stuck.view('/index.html', [])
  const alone = await stuck.view('/index.html', assets)
  assert.deepEqual((alone.assets ?? []).map((a) => a.source), ['origin', 'origin', 'origin', 'origin'])
  assert.ok((stuck.page?.stats.counts.errors.MGH_ERR_CONNECT_TIMEOUT ?? 0) + (stuck.page?.stats.counts.errors.MGH_ERR_CONNECT_FAILED ?? 0) > 0, JSON.stringify(stuck.page?.stats.counts.errors))
  for (const s of coordinator.sessions.values()) assert.equal(s.quarantined, false)

  // Its channels keep failing (each counted at the pass-over, a second after it was offered). Once three
  // in a row have (client/src/reach.js), its requests race the origin at once, well within the
  // pass-over each would otherwise wait, and its pages list nothing: nobody is handed a holder
  // nobody reaches.
  await first.view('/index.html', MORE.map((url) => ({ url, media: false })))
  await first.synced()
  let next = 0
  while (!stuck.page?.api.stats().reach.unreached && next < MORE.length - 1) {
    await stuck.view('/index.html', [{ url: MORE[next++], media: false }])
    await new Promise((resolve) => setTimeout(resolve, 1100))
  }
  assert.equal(stuck.page?.api.stats().reach.unreached, true)
  const raced = await stuck.view('/index.html', [{ url: MORE[next], media: false }])
  assert.deepEqual((raced.assets ?? []).map((a) => a.source), ['origin'])
  assert.ok(raced.ms < 900, `the page in ${Math.round(raced.ms)} ms`)
  await stuck.synced()
  assert.equal(stuck.page?.api.stats().held, 0, 'it lists nothing')
  assert.ok(stuck.cache.hashes().length > 0, 'though it holds what it loaded')
})
