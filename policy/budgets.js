/**
 * What a visitor gives by default: its store's byte quota (an LRU above it)
 * and the bytes it uploads to others per session and per day before it
 * turns receive-only. The client applies them (client/src/config.js takes
 * these defaults from here; cache.js evicts, uplink.js stops serving) and
 * the simulator replays them (sim/src/config.js; engine/client-stores.js,
 * engine/serving.js), each with code of its own: the simulator counts its
 * days in log time and keeps its stores in typed arrays, so only the
 * numbers are shared, and they are here so that neither can change alone.
 * README "Configuration" says what each means (`data-quota-mb`,
 * `data-upload-session-mb`, `data-upload-day-mb`).
 */

/** Defaults, in MB (2^20 bytes) as the client's attributes take them. */
const budgetDefaults = {
  quotaMb: 50,
  uploadSessionMb: 50,
  uploadDayMb: 200
}
// Frozen apart from its literal, so that fields type as number / string, not as their default values.
export const BUDGET_DEFAULTS = Object.freeze(budgetDefaults)
