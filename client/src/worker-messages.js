/**
 * The contract between a page and the service worker of transparent mode
 * (transparent.js ↔ worker.js): every message either side sends, its payload
 * and its reply, as `protocol/` is for the coordinator. Both sides post only
 * these types (`tsc` checks it, as part of `npm test`), and read only these.
 *
 * Messages are `{maygh: kind, …}` objects sent with `postMessage`. A message
 * that wants a reply carries a MessagePort, and the reply comes on it.
 *
 * Page → worker:
 * - `hello {ttfb, placing}`: the page's script listens (and saw this time to
 *   first byte for its own HTML; `placing`: it will say where its images lie,
 *   with `later`, once laid out). The worker answers `held {all}`, sends
 *   what it kept for the page, and from then on sends it `get`s.
 * - `later {urls, above, placing}`: where the page's layout now places its
 *   images: `urls` below the first viewport (the hedge rule lets peers take
 *   longer over them), `above` in it, `placing` while some are not placed
 *   yet (the page is still parsed, or not yet laid out); sent whenever its
 *   IntersectionObserver reports. A page that said `placing` in its hello has
 *   the images it has not placed taken as below the fold until it says it
 *   has placed them all (policy/hedge-rule.js belowFold): a request is not raced
 *   with the origin for want of knowing where its image lies.
 * - `peers {up, coordinator, lookupTimeoutMs, visitor, token}`: whether the page joined a
 *   coordinator. While the last page did not, the next page's requests made
 *   before its `hello` go to the origin at once; while it did, the worker asks
 *   those coordinators' `/held` about them (held-check.js), and keeps a
 *   socket of its own to them, joined as a fetch-only peer with this visitor
 *   key and join token (worker-socket.js).
 * - `frame {msg}`: a coordinator frame (`lookup`, `connect`, `report`) to send
 *   over the worker's socket (worker-route.js); its reply and the signals of
 *   the connections it starts come back as `frame`s.
 * - `read {hash}` + port: the stored bytes to serve a peer ({@link ReadReply}).
 * - `adopt {urls}` + port: store what the page loaded before the worker
 *   controlled it (its first view); `null` once done.
 * - `idle` + port: `null` once the worker has nothing in flight.
 * - `moving {ids}`: peer bytes flowed for these `get`s since the page last
 *   said so (the worker's hedge restarts their quiet time): at once for the
 *   first, then at most once per 20 ms for all of the page's `get`s together.
 *
 * Worker → page:
 * - `get {id, url, name, quietMs, priority, originMs}` + port: fetch an asset from peers
 *   (`quietMs`: the hedge deadline, after which a quiet holder is passed over;
 *   `priority`: the page's requests go to peers most urgent first; `originMs`:
 *   how long the origin would take to send it whole, as the worker has seen it
 *   answer, null before: a holder expected to lose the race is not asked; `id`:
 *   what `moving` names it by). The page says `moving` while peer bytes flow,
 *   answers `{t: 'race'}` when the origin should be asked now (this visitor's channels
 *   have not been opening: reach.js) and then `{t: 'done', asset}` (null: no
 *   peer gave it), whose bytes the page has not verified: the worker checks
 *   them against the name's SHA-256 before it keeps or answers with any of
 *   them (off the page's main thread), and says `bad` of a mismatch; the
 *   worker may send `{t: 'cancel'}` first (the origin won).
 * - `bad {url, hash, peer}`: the bytes `peer` sent for `url` failed the
 *   worker's verification (the request went on without them): the page counts
 *   the rejection, reports `peer` for asset `hash` and asks it nothing more.
 * - `ping`: a page whose `hello` the worker has not heard answers with one.
 * - `expect`: the worker will ask this page for peer bytes: its lookup (or
 *   `/held` check) of a request the page made before its `hello` named a
 *   holder, or could not tell (after `invited`, where holders were invited). Sent as soon as the worker knows, which may be before the page's
 *   script listens (kept for it until then, unless the page finished parsing
 *   first: so it is sent again after its `hello`). Until it comes, a page in
 *   transparent mode makes no offers and its lookups carry none.
 * - `invited {found, offered}`: before the page's script ran, the worker looked
 *   up the assets of its first requests over its own socket and invited the
 *   holders it was handed to make the offers (`offered`: cid by holder;
 *   `found`: holders by asset, as a lookup reply's). Sent after `via` and
 *   before `expect` and any `get` (kept for the page until its hello); the
 *   holders' offers and candidates follow as `frame`s. The page answers them
 *   the worker's way, asks those holders for those assets without a lookup of
 *   its own, and makes no offers; a page that has looked up already ignores it.
 * - `via {id, ice}`: the worker's socket is up as fetch-only peer `id` (with
 *   its welcome's ICE servers and policy), sent as the page says `hello`
 *   (before any `get`) and whenever it joins; `id` null: it is down (what
 *   waits on it has failed).
 * - `frame {msg}`: a coordinator frame for this page: the reply to one of its
 *   `frame`s (its own `ref`), or a signal for one of its connections.
 * - `held {all | add, remove, bytes}`: what the store holds, or how it changed.
 * - `loaded {e}`, `error {e}`, `failed`: the page's stats (loads the worker made for it).
 *
 * This module holds only types: it adds nothing to the bundles.
 */

/** @typedef {import('./names.js').Name} Name */
/** @typedef {{ bytes: Uint8Array<ArrayBuffer>, type: string }} StoredAsset */
/** @typedef {import('./peer-fetch.js').PeerAsset} PeerAsset */

/**
 * @typedef {{ maygh: 'hello', ttfb: number, placing?: boolean }} Hello
 * @typedef {{ maygh: 'later', urls: string[], above: string[], placing: boolean }} Later
 * @typedef {{ maygh: 'peers', up: boolean, coordinator?: string, lookupTimeoutMs?: number, visitor?: string, token?: string }} PeersUp
 * @typedef {{ maygh: 'frame', msg: Record<string, unknown> }} Frame a coordinator frame, either way
 * @typedef {{ maygh: 'read', hash: string }} Read
 * @typedef {StoredAsset | null} ReadReply
 * @typedef {{ maygh: 'adopt', urls: string[] }} Adopt
 * @typedef {{ maygh: 'idle' }} Idle
 * @typedef {{ maygh: 'moving', ids: number[] }} Moving
 * @typedef {Held} IdleReply once nothing is in flight: what the store holds then
 * @typedef {Hello | Later | PeersUp | Read | Adopt | Idle | Moving | Frame} PageMessage what a page sends its worker
 */

/**
 * @typedef {Parameters<import('./stats.js').Stats['loaded']>[0]} LoadEvent
 * @typedef {Parameters<import('./stats.js').Stats['error']>[0]} ErrorEvent
 * @typedef {{ maygh: 'get', id: number, url: string, name: Name, quietMs: number, priority: import('../../policy/hedge-rule.js').Priority, originMs?: number | null }} Get
 * @typedef {{ maygh: 'ping' }} Ping
 * @typedef {{ maygh: 'expect' }} Expect
 * @typedef {{ maygh: 'bad', url: string, hash: string, peer: string }} Bad
 * @typedef {{ maygh: 'held', all?: string[], add?: string[], remove?: string[], bytes: number }} Held
 * @typedef {{ maygh: 'loaded', e: LoadEvent }} Loaded
 * @typedef {{ maygh: 'error', e: ErrorEvent }} Failure
 * @typedef {{ maygh: 'failed' }} Failed
 * @typedef {{ maygh: 'via', id: string | null, ice?: RTCConfiguration }} Via
 * @typedef {{ maygh: 'invited', found: Record<string, unknown>, offered: Record<string, unknown> }} Invited
 * @typedef {Get | Ping | Expect | Bad | Held | Loaded | Failure | Failed | Via | Invited | Frame} WorkerMessage what the worker sends a page
 */

/**
 * On a `get`'s port.
 * @typedef {{ t: 'bytes' }} GetProgress peer bytes are flowing: what pages from before `moving` say (a new worker version takes over open pages)
 * @typedef {{ t: 'race' }} GetRace ask the origin now (peers are still tried: the first whole copy wins)
 * @typedef {{ t: 'done', asset: PeerAsset | null }} GetDone `asset`: not verified yet (the worker does)
 * @typedef {GetProgress | GetRace | GetDone} GetReply what the page answers
 * @typedef {{ t: 'cancel' }} GetCancel what the worker may send first
 */

export {}
