/**
 * The `maygh-manifest` command: writes the manifest (manifest.js) of the
 * static assets under a folder, and the piece lists of those named in pieces
 * beside it. Bad use prints `maygh-manifest: CODE: message` (protocol/errors.js,
 * CLI_ERRORS) and exits with status 2. Node only.
 */
import { stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { CLI_ERRORS, MayghError, PIECED_ABOVE, PIECE_LISTS_DIR, commandError, flagHelp, readArgs } from '../protocol/index.js'
import { CONTENT_TYPES, NEVER_LISTED, buildManifest, writePieceLists } from './manifest.js'

/** Extensions listed by default: those of CONTENT_TYPES but pages (a page is not an asset peers serve). */
const LISTED_EXTENSIONS = Object.keys(CONTENT_TYPES).filter((e) => e !== '.html')

/** The flags, with their help. @type {Readonly<Record<string, import('../protocol/cli-args.js').FlagSpec>>} */
export const MANIFEST_FLAGS = Object.freeze({
  prefix: { type: 'string', arg: 'PATH', help: 'the URL path DIR is served at: an asset\'s name in the manifest is PATH followed by its path under DIR (with --prefix /static/, DIR/img/a.png is /static/img/a.png); starts with "/"; default /' },
  out: { type: 'string', arg: 'FILE', help: `write the manifest to FILE instead of stdout; the piece lists go into the folder ${PIECE_LISTS_DIR}/ beside FILE (without --out, into DIR/${PIECE_LISTS_DIR}/), where pages that fetch the manifest from FILE's folder find them` },
  help: { type: 'boolean', short: 'h', help: 'print this help and exit' }
})

/** @returns {string} the --help text */
export function manifestHelp () {
  return [
    'Usage: maygh-manifest DIR [--prefix PATH] [--out FILE]',
    '',
    'Writes the Maygh manifest of the static assets under DIR (every folder',
    'in it): each asset\'s URL path with its SHA-256, size and content type, the',
    'names pages load assets by. Run it on every deploy; serve the output as',
    '/maygh-manifest.json (docs/protocol.md, "Manifest").',
    '',
    'Options:',
    ...flagHelp(MANIFEST_FLAGS),
    '',
    'Files listed: those whose extension is one of',
    `  ${LISTED_EXTENSIONS.join(' ')}`,
    'Left out: every other file (pages, .html, among them); wherever they are,',
    'the manifest itself and the client\'s own scripts:',
    `  ${NEVER_LISTED.join(' ')}`,
    `the --out file; and every file in a ${PIECE_LISTS_DIR}/ folder (piece lists).`,
    `An asset above ${PIECED_ABOVE / (1024 * 1024)} MiB is named in pieces too: its entry gains "pieces",`,
    `the name of its piece list, written to ${PIECE_LISTS_DIR}/ (see --out).`,
    '',
    'A bad flag or argument, or a folder or file that cannot be read or written,',
    'prints "maygh-manifest: CODE: message" on stderr and exits with status 2',
    '(codes: README.md, "Error codes"). A count of the assets goes to stderr.',
    ''
  ].join('\n')
}

/**
 * Runs the command.
 * @param {string[]} argv the arguments after the program name
 * @param {{ stdout: { write: (text: string) => unknown }, stderr: { write: (text: string) => unknown } }} io
 * @returns {Promise<number>} exit status
 */
export async function manifestMain (argv, { stdout, stderr }) {
  try {
    const { tokens } = parseArgs({ args: argv, options: MANIFEST_FLAGS, strict: false, allowPositionals: true, tokens: true })
    const { values, positionals } = readArgs(/** @type {import('../protocol/cli-args.js').ArgToken[]} */ (tokens), MANIFEST_FLAGS, { positionals: 1 })
    const { prefix = '/', out, help } = /** @type {{ prefix?: string, out?: string, help?: boolean }} */ (values)
    if (help) {
      stdout.write(manifestHelp())
      return 0
    }
    const dir = positionals[0]
    if (dir === undefined) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_MISSING, 'DIR (the folder of static assets to list)')
    if (!prefix.startsWith('/')) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, `--prefix must start with "/", got ${JSON.stringify(prefix)}`)
    if (out === '') throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_BAD_VALUE, '--out needs a file name, got ""')
    await checkFolder(dir)
    /** @type {Map<string, Buffer>} */
    const lists = new Map()
    const manifest = await file('reading DIR', buildManifest(dir, { prefix, exclude: out ? [out] : [], lists }))
    const text = JSON.stringify(manifest, null, 2) + '\n'
    if (out) await file('--out', writeFile(out, text))
    else stdout.write(text)
    // Beside the manifest: served from the --out file's folder, or from DIR when it goes to stdout.
    const beside = out ? dirname(out) : dir
    const written = await file('writing the piece lists', writePieceLists(beside, lists))
    stderr.write(`maygh-manifest: ${Object.keys(manifest.assets).length} assets${written ? `, ${written} in pieces (their lists in ${beside}/${PIECE_LISTS_DIR}/)` : ''}\n`)
    return 0
  } catch (err) {
    const { line, exit } = commandError('maygh-manifest', err)
    stderr.write(`${line}\n`)
    return exit
  }
}

/**
 * @param {string} dir
 * @returns {Promise<void>} once DIR is known to be a folder
 * @throws {MayghError} MGH_CLI_ERR_FILE
 */
async function checkFolder (dir) {
  const info = await stat(dir).catch((/** @type {NodeJS.ErrnoException} */ err) => {
    throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_FILE, `DIR ${JSON.stringify(dir)}: ${err.code === 'ENOENT' ? 'no such folder' : err.message}`)
  })
  if (!info.isDirectory()) throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_FILE, `DIR ${JSON.stringify(dir)} is not a folder`)
}

/**
 * A file system step whose failure is the user's to mend (a file it may not
 * read, a folder it may not write, a full disk).
 * @template T
 * @param {string} doing what the step is, for the message
 * @param {Promise<T>} step
 * @returns {Promise<T>}
 * @throws {MayghError} MGH_CLI_ERR_FILE, with the system's message (which names its code once)
 */
async function file (doing, step) {
  try {
    return await step
  } catch (err) {
    if (typeof (/** @type {NodeJS.ErrnoException} */ (err)).code !== 'string') throw err
    throw new MayghError(CLI_ERRORS.MGH_CLI_ERR_FILE, `${doing}: ${/** @type {Error} */ (err).message}`)
  }
}
