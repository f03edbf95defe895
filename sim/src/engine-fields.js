/**
 * Offsets in the engine's per-client record `Engine#cs` (four float64 side by
 * side, so one cache line serves all of a candidate's checks).
 */

/** online until this time (−∞ never; ∞ while its session goes on) */
export const ONLINE = 0
/** when a lookup last handed the client out (0 = never) */
export const CHOSEN = 1
/** sessions started so far: the number of the current one */
export const SESSION = 2
/** upload tokens left (only with an upload cap) */
export const TOKENS = 3
