// Runs the maygh-sim bin as a user would, for the CLI-level tests.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../bin/maygh-sim.js', import.meta.url))

/**
 * @param {string[]} args
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>} its exit status and output
 */
export function runCli (args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? /** @type {any} */ (err).code : 0, stdout, stderr })
    })
  })
}
