/**
 * Which of the crowd's visitors are of which kind, by the simulator's own
 * rule (sim/src/rng.js `hasTrait`), so that the crowd and the simulator
 * replaying the same slice put the same log clients behind untraversable
 * NATs. A client's number is its order of first appearance in the slice, as
 * the simulator's reader interns it.
 */
import { hasTrait } from '../../sim/src/rng.js'

/**
 * @param {number} client its number in the slice (0-based, order of first appearance)
 * @param {number} share fraction of visitors behind a NAT nobody can reach
 * @param {number} seed the run's seed
 * @returns {boolean}
 */
export function untraversableClient (client, share, seed) {
  return share > 0 && hasTrait(client, 'untraversable', share, seed)
}
