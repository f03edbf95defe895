/**
 * The browser bundles `npm run build` writes to `dist/` (and the `maygh` package
 * ships): file → entry module in `client/src/`.
 *
 *   maygh.js           the script tag of transparent mode (maygh.js → transparent.js)
 *   maygh-sw.js        its service worker (worker.js)
 *   maygh-elements.js  the script tag of marked-element mode (maygh-elements.js → elements.js)
 *
 * Gzip budgets: 14.5 KB for the default script tag, 11 KB for the worker;
 * 16.625 KB for marked-element mode, whose one script does the worker's job too
 * (the asset store, the manifest, the hedged load path). Both page scripts
 * were 10 / 12 KB until issue 23 added the hedge rule (`data-hedge`, the
 * images below the fold, the origin's observed rate) and the request slots
 * (peer-slots.js): about 0.6 KB to maygh.js, 0.8 KB to maygh-elements.js;
 * then peers measured against peers (a slow holder passed over) and offers
 * carried by the first lookup (protocol 3): about 0.45 KB to each; then
 * a page's placement while it is still placing its images and the cut of a
 * cancelled reply (peer protocol): about 0.3 KB to maygh.js, whose budget
 * is 12.5 KB since; then a holder not asked when it would lose the race
 * (outrun) and per-frame bookkeeping made cheaper (one stall timer, waiting
 * requests told of bytes at most every 10 ms): about 0.25 KB to each, and
 * maygh-elements.js's budget is 14.5 KB since; then a visitor that
 * remembers that its channels do not open (reach.js) and races the origin at
 * once: about 0.3 KB to each, and the budgets were 13 KB and 15 KB; then a
 * failover that tries the coordinators the last welcome named and leaves
 * those that failed for a while (issue 24), and failed lookups and
 * unforeseen failures counted as errors: about 0.3 KB to each, and the
 * budgets were 13.5 KB and 15.5 KB; then large assets in pieces, each kept,
 * served, fetched from the next holder and verified alone (issue 26:
 * cache.js, piece-stream.js, protocol/pieces.js): about 1.4 KB to
 * maygh-elements.js (and 3.4 KB to the worker, with its answers to range
 * requests and its stream from the origin when nobody holds a video), whose
 * budget is 16.5 KB since. Issue 27 brought maygh.js back under its budget
 * with room to grow, nothing taken out: the members of its classes that
 * nothing outside a class uses are private (`#…`, which the minifier
 * renames, where it must keep a public name whole), esbuild minifies before
 * terser (build.js), and a few spots were written shorter: maygh.js from
 * 13.0 to 12.5 KB (13,296 → 12,785 B as build.js measures, 1,039 B under
 * its budget; `gzip -9` says 13,245 → 12,737), maygh-elements.js from 15.7
 * to 15.2 KB, the worker from 9.2 to 9.1 KB. Then the worker's own
 * coordinator socket, which carries a page's first lookup before the page's
 * socket has joined (worker-socket.js): about 1 KB to the worker, whose
 * budget is 10.5 KB since (it is fetched once, after its first page has
 * loaded, and is on no page's way to its first paint). Then request slots
 * that count the bytes each channel still owes and send a request to the
 * channel that owes least, the next asked for as the last nears its end
 * (peer-slots.js): about 0.25 KB to each page script, and maygh.js's budget
 * is 14 KB since (13.5 KB before). Then the origin's answer passed on to
 * the page as it comes once the origin is a request's only source (hedge.js
 * `commit`): about 0.1 KB to the worker, whose budget is 11 KB since.
 * Then requests below the fold queued behind the urgent replies a channel
 * carries while the viewport's are on their way (peer-slots.js), about 0.05 KB,
 * which put maygh.js over its 14 KB budget (built up by the changes of
 * 2026-11-29 to 14,335 B; 14,392 B after): 14.5 KB since. Then usage
 * reports a page could not send kept apart, each with an id the
 * coordinator counts once (a Firefox navigation had one page's bytes
 * counted twice): about 0.06 KB to each page script, which put
 * maygh-elements.js (16,892 B before) over its 16.5 KB budget: 16.625 KB since.
 * Then invitations (docs/protocol.md): the worker looks up a page's first
 * requests itself and invites holders to make the offers, the page answers
 * them and uses what the worker found, a holder makes an offer when invited:
 * about 0.3 KB to the worker (11,305 B, its `held` question over its socket gone) and 0.25 KB to each page script
 * (maygh-elements.js 17,234 B: its pages are holders too, and the page's half
 * comes along in the classes it shares): 11.25 and 16.875 KB since. Then
 * a page's own offer to an invited holder whose offer does not come (a
 * client from before invitations): about 0.07 KB to each page script, which
 * put maygh-elements.js (17,234 B before, 17,303 B after) over: 17 KB since.
 */
export const GZIP_BUDGETS = Object.freeze({
  'maygh.js': 14848,
  'maygh-sw.js': 11520,
  'maygh-elements.js': 17408
})
export const BUNDLES = Object.freeze({
  'maygh.js': 'maygh.js',
  'maygh-sw.js': 'worker.js',
  'maygh-elements.js': 'maygh-elements.js'
})
