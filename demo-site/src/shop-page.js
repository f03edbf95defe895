/**
 * The shop's pages. The listing comes in both of the client's modes:
 * - `plain` (at `/`, transparent mode): ordinary `<img src>` markup and one
 *   `<script src="/maygh.js" async>`; its service worker answers the image
 *   requests from the visitor's store, from other visitors or from this origin;
 * - `elements` (at `/elements`, marked-element mode): product images carry
 *   `data-maygh-src` and no `src`, so the browser does not fetch them itself:
 *   `maygh-elements.js` fetches each from peers or, failing that, from this origin.
 * `/about` is a page without product images (the worker starts there too).
 */

/** @typedef {import('./catalog.js').Product} Product */

const CATEGORIES = ['Jewelry & Accessories', 'Home & Living', 'Kitchen & Dining', 'Art & Collectibles',
  'Bath & Beauty', 'Bags & Purses', 'Gifts', 'On sale']

/**
 * Escape text for HTML element content and double-quoted attributes.
 * @param {string | number} value
 * @returns {string}
 */
export function escapeHtml (value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * @param {number} rating 4.0–5.0
 * @returns {string} five stars, filled to the nearest half
 */
function stars (rating) {
  const full = Math.floor(rating)
  const half = rating - full >= 0.5 ? 1 : 0
  return '★'.repeat(full + half) + '☆'.repeat(5 - full - half)
}

/**
 * One product card.
 * @param {Product} p
 * @param {'plain' | 'elements'} markup
 * @returns {string}
 */
function card (p, markup) {
  return `<article class="card" id="${p.id}">
  <a class="thumb" href="#${p.id}"><img ${markup === 'plain' ? 'src' : 'data-maygh-src'}="${escapeHtml(p.path)}" alt="${escapeHtml(p.name)}" width="${p.width}" height="${p.height}"></a>
  <button class="fav" type="button" aria-label="Add to favourites">♡</button>
  <h2 class="name">${escapeHtml(p.name)}</h2>
  <p class="rating"><span class="stars">${stars(p.rating)}</span> (${p.reviews.toLocaleString('en-US')})</p>
  <p class="price">$${escapeHtml(p.price)}</p>
  <p class="meta">${escapeHtml(p.shop)}</p>
  <p class="meta">${p.freeShipping ? '<span class="ship">FREE shipping</span>' : '&nbsp;'}</p>
  <div><button class="add" type="button">Add to cart</button></div>
</article>`
}

/**
 * @typedef {{ catalog: Product[], coordinatorUrl: string, clientData?: Record<string, string>, link?: { rttMs: number, mbps: number } | null }} PageOptions
 *   `clientData`: more `data-` attributes for the client's script tag (name without `data-`);
 *   `link`: the distant origin the site emulates, which the footer states
 */

/**
 * The page's head: the client's script tag for the mode, then the shop's own.
 * @param {string} title
 * @param {PageOptions} options
 * @param {'plain' | 'elements'} markup
 */
function head (title, { coordinatorUrl, clientData = {} }, markup) {
  const data = Object.entries(clientData).map(([k, v]) => ` data-${escapeHtml(k)}="${escapeHtml(v)}"`).join('')
  const client = markup === 'plain'
    ? `<script src="/maygh.js" data-coordinator="${escapeHtml(coordinatorUrl)}"${data} async></script>`
    : `<link rel="preload" href="/maygh-manifest.json" as="fetch" crossorigin>
<script src="/maygh-elements.js" data-coordinator="${escapeHtml(coordinatorUrl)}"${data} defer></script>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/shop.css">
${client}
<script src="/static/shop.js" defer></script>
</head>
<body>
<header class="top">
  <a class="logo" href="/"><svg width="30" height="30" viewBox="0 0 30 30" aria-hidden="true"><circle cx="15" cy="15" r="14" fill="#f1641e"/><path d="M8 20V10l7 7 7-7v10" stroke="#fff" stroke-width="2.6" fill="none" stroke-linejoin="round"/></svg>Makers' Market</a>
  <form class="search" role="search" onsubmit="return false"><input type="search" placeholder="Search for anything" aria-label="Search"><button type="submit">Search</button></form>
  <nav class="actions"><a href="/about">About</a><a href="#">Sign in</a><a href="#">♡ Favourites</a><a href="#">Cart <span class="cart-count">0</span></a></nav>
</header>`
}

/**
 * The page's end: what Maygh does here, and how far away this origin acts.
 * @param {PageOptions} options
 */
const footer = ({ link }) => `<footer class="foot">Product photos on this page are delivered by other visitors' browsers through Maygh, and checked against their SHA-256 before display.
  ${link ? `<span class="distance">This demo's origin answers as if it were ${link.rttMs} ms away at ${link.mbps} Mbit/s per response (emulated; <code>ORIGIN_RTT_MS=0 npm start</code> serves it at loopback speed).</span>` : ''}
  <label class="share"><input type="checkbox" class="share-toggle" checked> Share the photos I have seen with other shoppers (<span class="share-mode">on</span>)</label></footer>
</body>
</html>
`

/**
 * The listing.
 * @param {PageOptions & { markup: 'plain' | 'elements' }} options
 * @returns {string}
 */
export function renderShopPage (options) {
  const { catalog, markup } = options
  return `${head("Makers' Market · handmade goods from independent shops", options, markup)}
<nav class="cats">${CATEGORIES.map((c) => `<a href="#">${escapeHtml(c)}</a>`).join('')}</nav>
<section class="hero">
  <h1>Find something one of a kind</h1>
  <p>Mugs, prints, rings and planters from ${new Set(catalog.map((p) => p.shop)).size} independent shops, made by hand and shipped with care.</p>
</section>
<div class="toolbar"><span class="result-count">${catalog.length} results</span><span>Sort by: Relevancy</span></div>
<main class="grid">
${catalog.map((p) => card(p, markup)).join('\n')}
</main>
${footer(options)}`
}

/**
 * A page about the shop, without product images.
 * @param {PageOptions} options
 * @returns {string}
 */
export function renderAboutPage (options) {
  const { catalog } = options
  return `${head("About Makers' Market", options, 'plain')}
<section class="hero">
  <h1>About Makers' Market</h1>
  <p>${new Set(catalog.map((p) => p.shop)).size} independent shops sell their handmade goods here. <a href="/">Browse the shop</a>.</p>
</section>
${footer(options)}`
}
