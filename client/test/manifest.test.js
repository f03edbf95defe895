/**
 * The manifest CLI, run as a site owner runs it: it lists the assets under a
 * folder and never its own output, the --out file, or the client's bundles.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { NEVER_LISTED, sriHash } from '../manifest.js'
import { MANIFEST_FLAGS } from '../manifest-cli.js'
import { ERRORS, PIECED_ABOVE, PIECE_LISTS_DIR, pieceListPath, splitPieces } from '../../protocol/index.js'

const CLI = fileURLToPath(new URL('../bin/maygh-manifest.js', import.meta.url))

test('maygh-manifest DIR > DIR/maygh-manifest.json lists the assets, not itself, the --out file or the client', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-manifest-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await mkdir(join(dir, 'img'))
  const photo = Buffer.from('not really a png')
  await writeFile(join(dir, 'img', 'a.png'), photo)
  await writeFile(join(dir, 'site.css'), 'body{}')
  await writeFile(join(dir, 'index.html'), '<!doctype html>')
  for (const own of ['maygh.js', 'maygh-sw.js', 'maygh-elements.js']) await writeFile(join(dir, own), '//')
  // The shell creates the output file before the CLI reads the folder.
  await writeFile(join(dir, 'maygh-manifest.json'), '')
  const out = execFileSync(process.execPath, [CLI, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const manifest = JSON.parse(out)
  assert.deepEqual(Object.keys(manifest.assets).sort(), ['/img/a.png', '/site.css'])
  assert.deepEqual(manifest.assets['/img/a.png'], { hash: sriHash(photo), size: photo.length, type: 'image/png' })

  execFileSync(process.execPath, [CLI, dir, '--prefix', '/static/', '--out', join(dir, 'names.json')], { stdio: 'ignore' })
  const again = JSON.parse(await readFile(join(dir, 'names.json'), 'utf8'))
  assert.deepEqual(Object.keys(again.assets).sort(), ['/static/img/a.png', '/static/site.css'], 'the --out file is not listed either')
})

test('an asset above PIECED_ABOVE is named in pieces too: the name of its piece list, written beside the manifest', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-manifest-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const clip = randomBytes(PIECED_ABOVE + 1)
  const small = randomBytes(PIECED_ABOVE)
  await writeFile(join(dir, 'clip.mp4'), clip)
  await writeFile(join(dir, 'small.mp4'), small)
  const manifest = JSON.parse(execFileSync(process.execPath, [CLI, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
  assert.deepEqual(manifest.assets['/clip.mp4'], { hash: sriHash(clip), size: clip.length, type: 'video/mp4', pieces: (await splitPieces(new Uint8Array(clip))).root })
  assert.deepEqual(manifest.assets['/small.mp4'], { hash: sriHash(small), size: small.length, type: 'video/mp4' }, 'at PIECED_ABOVE exactly: whole only')
  const { root, list } = await splitPieces(new Uint8Array(clip))
  assert.deepEqual(new Uint8Array(await readFile(join(dir, pieceListPath(root)))), list, 'its list, where a client looks for it beside the manifest')
  // Again with --out elsewhere: the lists go beside that file, and are never listed themselves.
  const site = join(dir, 'site')
  await mkdir(site)
  execFileSync(process.execPath, [CLI, dir, '--out', join(site, 'maygh-manifest.json')], { stdio: 'ignore' })
  assert.deepEqual(new Uint8Array(await readFile(join(site, pieceListPath(root)))), list)
  const again = JSON.parse(await readFile(join(site, 'maygh-manifest.json'), 'utf8'))
  assert.deepEqual(Object.keys(again.assets).sort(), ['/clip.mp4', '/small.mp4'])
})

/**
 * @param {string[]} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function run (args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], (err, stdout, stderr) => resolve({ code: err ? /** @type {any} */ (err).code : 0, stdout, stderr }))
  })
}

test('maygh-manifest: each bad argument is refused with its code, naming it as given, exit 2, no stack trace', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'maygh-manifest-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'a.png'), 'png')
  const missing = join(dir, 'nope')
  for (const [args, code, named] of /** @type {[string[], string, string][]} */ ([
    [[], 'MGH_CLI_ERR_MISSING', 'DIR'],
    [[missing], 'MGH_CLI_ERR_FILE', `DIR ${JSON.stringify(missing)}: no such folder`],
    [[join(dir, 'a.png')], 'MGH_CLI_ERR_FILE', 'is not a folder'],
    [[dir, '--out', join(missing, 'm.json')], 'MGH_CLI_ERR_FILE', '--out: ENOENT: no such file or directory'],
    [[dir, '--prefix', 'static'], 'MGH_CLI_ERR_BAD_VALUE', '--prefix must start with "/", got "static"'],
    [[dir, '--out='], 'MGH_CLI_ERR_BAD_VALUE', '--out needs a file name'],
    [[dir, '--prefix'], 'MGH_CLI_ERR_BAD_FLAG', '--prefix needs a value'],
    [[dir, '--prefix', '--out', 'x'], 'MGH_CLI_ERR_BAD_FLAG', '--prefix needs a value, got the flag --out'],
    [[dir, dir], 'MGH_CLI_ERR_BAD_FLAG', 'unexpected argument'],
    [[dir, '--bogus'], 'MGH_CLI_ERR_BAD_FLAG', '--bogus is not a flag'],
    [['-q', dir], 'MGH_CLI_ERR_BAD_FLAG', '-q is not a flag']
  ])) {
    const { code: status, stdout, stderr } = await run(args)
    assert.equal(status, 2, stderr)
    assert.equal(stdout, '')
    assert.ok(stderr.startsWith(`maygh-manifest: ${code}: `), stderr)
    assert.ok(stderr.includes(named), `${stderr} names ${named}`)
    assert.equal(stderr.trim().split('\n').length, 1, 'one line, no stack trace')
    assert.doesNotMatch(stderr, /\b(E[A-Z]+): \1\b/, 'a system code once')
    assert.equal(ERRORS[/** @type {keyof typeof ERRORS} */ (code)]?.exit, 2)
  }
})

test('maygh-manifest --help explains every flag of its table and which files are left out', async () => {
  const { code, stdout } = await run(['--help'])
  assert.equal(code, 0)
  const flat = stdout.replace(/\s+/g, ' ')
  for (const [flag, spec] of Object.entries(MANIFEST_FLAGS)) {
    assert.match(stdout, new RegExp(`^ {2}(-${spec.short}, )?--${flag}${spec.arg ? ` ${spec.arg}` : ''}$`, 'm'), `--${flag}`)
    assert.ok(spec.help && flat.includes(spec.help), `--${flag} is explained`)
  }
  for (const name of NEVER_LISTED) assert.ok(flat.includes(name), `--help says ${name} is never listed`)
  assert.ok(flat.includes(`${PIECE_LISTS_DIR}/`) && flat.includes('--out file'))
  assert.match(flat, /\.png .*\.webm/, 'the extensions listed')
})
