/**
 * The engine's per-client state, in two arrays laid out for the cost that
 * dominates a replay: reading many random candidates per lookup.
 *
 * `Engine#hot` (int32, four per client, one 16-byte record) is all a lookup
 * reads of every sampled holder: one cache line answers every question the
 * store and the policy ask about a candidate.
 */
/** the client's current session while it is online, −1 while it is offline */
export const LIVE = 0
/** the coordinator's clock when a lookup last handed the client out (0 = never) */
export const CHOSEN = 1
/** the number of the last lookup whose asker has a live channel to this client */
export const MARK = 2
/**
 * online until (`ONLINE`) in whole seconds after the trace's first request,
 * rounded down, `UNTIL_OPEN` while the session goes on: enough to tell, without
 * reading `Engine#cs`, that a holder stays online through a connection set-up
 */
export const UNTIL = 3
/** `UNTIL` of a client whose session goes on */
export const UNTIL_OPEN = 0x7fffffff
/** int32 fields per client in `Engine#hot` */
export const HOT_STRIDE = 4

/*
 * `Engine#cs` (float64, four per client, the fourth unused so that a record
 * never straddles a cache line) holds the rest, read for the
 * requester and for the few holders the policy asks `accept` about:
 */
/** online until this time (−∞ never; ∞ while its session goes on) */
export const ONLINE = 0
/** sessions started so far: the number of the current one */
export const SESSION = 1
/** upload tokens left (only with an upload cap) */
export const TOKENS = 2
