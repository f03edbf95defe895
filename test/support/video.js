/**
 * A real, playable, seekable video for the media tests and benches: a test
 * pattern encoded by ffmpeg (scripts/install-system-deps.sh installs it) as
 * VP8 in WebM, which Chromium and Firefox both play, at a constant bit rate
 * so that its size is what is asked for.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

/**
 * @param {string} path where to write it (`.webm`)
 * @param {{ seconds: number, mbps: number, size?: string }} o length, bit rate (so about seconds × mbps / 8 MB), frame size
 * @returns {Promise<void>}
 */
export async function makeVideo (path, { seconds, mbps, size = '640x360' }) {
  const rate = `${mbps}M`
  await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=30,noise=alls=20:allf=t`,
    '-t', String(seconds), '-c:v', 'libvpx', '-b:v', rate, '-minrate', rate, '-maxrate', rate, '-bufsize', rate,
    '-deadline', 'realtime', '-cpu-used', '8', '-g', '30', '-y', path], { timeout: 120000 })
}
