// `--json` prints valid JSON on stdout whichever documented way the simulator is run:
// the bin through `npx maygh-sim` (from a clone: the repository's package.json names every bin), and `npm run -s sim --` (without -s, npm's
// banner would open stdout). npm's own warnings go to stderr and do not count.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const TINY = ['--synthetic', 'etsy', '--days', '1', '--requests', '2000', '--json', '--no-progress']

/**
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<{ code: number | null, stdout: string }>}
 */
function run (command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    let stdout = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout }))
  })
}

for (const [name, command, args] of /** @type {[string, string, string[]][]} */ ([
  ['npx maygh-sim', 'npx', ['maygh-sim', ...TINY]],
  ['npm run -s sim --', 'npm', ['run', '-s', 'sim', '--', ...TINY]]
])) {
  test(`${name} … --json writes one JSON object and nothing else on stdout`, { timeout: 60_000 }, async () => {
    const { code, stdout } = await run(command, args)
    assert.equal(code, 0)
    const result = JSON.parse(stdout)
    assert.equal(typeof result.savings, 'number')
    assert.ok(result.requests > 0)
    assert.ok(result.counted.requests > 0, 'says what it counted')
  })
}
