/**
 * Small facts about the page both entry points read.
 */
import { readConfig } from './config.js'

/** The script tag that loaded us (its data attributes are the configuration). */
export const currentScript = () => /** @type {HTMLScriptElement | null} */ (document.currentScript ?? document.querySelector('script[data-coordinator]'))

/** The page's own time to first byte, ms: the first estimate of the origin's latency (NaN if unknown). */
export function navigationTtfb () {
  const nav = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType?.('navigation')[0])
  return nav ? nav.responseStart - nav.requestStart : NaN
}

/**
 * A script tag's start: the mode's start, configured by the tag's `data-` attributes.
 * @param {(config: ReturnType<typeof readConfig>) => unknown} start
 */
export const fromScriptTag = (start) => start(readConfig({ ...currentScript()?.dataset }, console.warn))
