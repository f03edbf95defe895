/**
 * Page integration without site JavaScript: `<img data-maygh-src>` and
 * `<link data-maygh-href>` get a blob URL of the verified bytes in `src` /
 * `href`. Elements added or re-pointed later are picked up by a
 * MutationObserver; those in the viewport are asked for first. If a load fails everywhere the element gets the plain URL,
 * so the page never ends up worse than without Maygh.
 */
import { sha256FromIntegrity } from '../../protocol/index.js'

const SELECTOR = '[data-maygh-src],[data-maygh-href]'

/**
 * @param {Document} doc
 * @param {{ load: (url: string, priority: import('../../policy/hedge-rule.js').Priority) => Promise<Blob>, name: (url: string, hash: string) => void }} client
 */
export function bindDom (doc, client) {
  /** @type {WeakMap<Element, string>} the URL each element was last loaded for */
  const seen = new WeakMap()

  /**
   * @param {Element} el
   * @param {boolean} away outside the first viewport
   */
  const handle = (el, away) => {
    const attr = el.hasAttribute('data-maygh-src') ? 'src' : 'href'
    const url = el.getAttribute('data-maygh-' + attr)
    if (!url || seen.get(el) === url) return
    seen.set(el, url)
    const hash = sha256FromIntegrity(el.getAttribute('data-maygh-integrity') ?? el.getAttribute('integrity'))
    if (hash) client.name(url, hash)
    // an <img> (src) or a <link> (href): only the property `attr` names is touched
    const target = /** @type {Element & Record<'src' | 'href', string>} */ (el)
    // a stylesheet blocks rendering; an image outside the viewport can wait for peers (policy/hedge-rule.js)
    client.load(url, attr === 'href' ? 'blocking' : away ? 'later' : 'viewport').then(
      (blob) => {
        if (seen.get(el) !== url) return
        const old = target[attr]
        target[attr] = URL.createObjectURL(blob)
        if (old?.startsWith('blob:')) URL.revokeObjectURL(old)
      },
      () => { if (seen.get(el) === url) target[attr] = url }
    )
  }

  /**
   * Load the marked elements under `root`, those in the viewport first (peers
   * answer requests in the order they come).
   * @param {ParentNode & Node} root
   */
  const scan = (root) => {
    const els = [...(root instanceof Element && root.matches(SELECTOR) ? [root] : []), ...(root.querySelectorAll?.(SELECTOR) ?? [])]
    const away = new Map(els.map((el) => {
      const r = el.getBoundingClientRect()
      return [el, +(r.bottom < 0 || r.top > innerHeight)]
    }))
    els.sort((a, b) => /** @type {number} */ (away.get(a)) - /** @type {number} */ (away.get(b))).forEach((el) => handle(el, away.get(el) === 1))
  }

  scan(doc)
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') scan(/** @type {Element} */ (r.target))
      else r.addedNodes.forEach((n) => { if (n instanceof Element) scan(n) })
    }
  }).observe(doc.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-maygh-src', 'data-maygh-href'] })
}
