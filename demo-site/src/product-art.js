/**
 * Draws a "product photo" for a catalogue entry: a studio backdrop, a table
 * top, a soft contact shadow and the product itself, lit from the upper left.
 * Crude next to a real photograph, but it reads as a shop listing at a glance.
 */
import { Raster, ellipse, hsl, mix, prng, ring, roundedRect } from './raster.js'

/** @typedef {import('./raster.js').Rgb} Rgb */
/** @typedef {import('./catalog.js').Product} Product */

/**
 * Lighting factor across a shape: bright on the left, falling off to the right.
 * @param {number} x
 * @param {number} cx
 * @param {number} hw
 * @returns {number}
 */
function light (x, cx, hw) {
  const t = (x - cx) / hw
  return 1.1 - 0.32 * (t + 0.35) ** 2
}

/**
 * A colour function that shades `base` across a shape of half-width `hw`.
 * @param {Rgb} base
 * @param {number} cx
 * @param {number} hw
 * @returns {(x: number, y: number) => Rgb}
 */
function shaded (base, cx, hw) {
  return (x) => {
    const k = light(x, cx, hw)
    return [base[0] * k, base[1] * k, base[2] * k]
  }
}

/**
 * Render the picture for one product.
 *
 * @param {Product} product
 * @returns {Raster}
 */
export function drawProduct (product) {
  const { width: w, height: h, hue } = product
  const random = prng(product.seed)
  const img = new Raster(w, h)
  const back = hsl((hue + 180 + random() * 60) % 360, 0.18 + random() * 0.2, 0.86 + random() * 0.08)
  const tableTone = random()
  const table = tableTone < 0.5 ? hsl(28 + random() * 12, 0.35, 0.52 + random() * 0.15) : hsl(hue, 0.06, 0.9)
  const horizon = h * (0.62 + random() * 0.1)
  const grain = 6 + random() * 10
  img.fillRows((y) => {
    if (y < horizon) return mix(back, [back[0] * 0.82, back[1] * 0.82, back[2] * 0.85], y / horizon)
    // Wood (or linen) grain: bands along the table, closer together towards the back.
    // They depend on y only: bands that wander in x cost ~0.1 byte a pixel in PNG.
    const band = Math.sin(Math.sqrt(y - horizon) * 3.2) * grain
    const k = 1 - 0.18 * ((y - horizon) / (h - horizon))
    return [(table[0] + band) * k, (table[1] + band * 0.8) * k, (table[2] + band * 0.6) * k]
  })
  const s = Math.min(w, h) * SCALE[product.kind] // the product should fill most of the frame
  const cx = w / 2 + (random() - 0.5) * w * 0.08
  const base = Math.min(horizon + s * 0.08, h * 0.93)
  const color = hsl(hue, 0.25 + random() * 0.3, 0.38 + random() * 0.25)
  img.shadow(cx + s * 0.04, base, s * 0.3, s * 0.055, 0.45)
  DRAW[product.kind](img, { cx, base, s, color, random })
  return img
}

/** Size of each kind relative to the picture's short side; tall things are drawn smaller. */
const SCALE = { mug: 1.3, vase: 1.05, bowl: 1.25, candle: 1.15, ring: 1.2, necklace: 1.1, plant: 1.1, tote: 0.95, print: 0.95, soap: 1.3 }

/** @typedef {{ cx: number, base: number, s: number, color: Rgb, random: () => number }} Scene */

/** One drawing function per product kind; each stands the product on `base`. */
const DRAW = {
  /** @param {Raster} img @param {Scene} o */
  mug (img, { cx, base, s, color }) {
    const hw = s * 0.17
    const hh = s * 0.2
    const cy = base - hh
    img.shape([cx + hw * 0.4, cy - hh, cx + hw * 1.8, cy + hh], ring(cx + hw, cy, hw * 0.55, s * 0.025, 1.2), shaded(color, cx, hw * 2))
    img.shape([cx - hw - 2, cy - hh - 2, cx + hw + 2, base + 2], roundedRect(cx, cy, hw, hh, s * 0.03), shaded(color, cx, hw))
    img.shape([cx - hw, cy - hh - s * 0.03, cx + hw, cy - hh + s * 0.03], ellipse(cx, cy - hh + 2, hw * 0.92, s * 0.022), () => mix(color, [40, 30, 20], 0.7))
  },
  /** @param {Raster} img @param {Scene} o */
  vase (img, { cx, base, s, color }) {
    const r = s * 0.2
    const cy = base - r
    img.shape([cx - s * 0.06, cy - r * 2, cx + s * 0.06, cy], roundedRect(cx, cy - r * 1.3, s * 0.05, r * 0.7, s * 0.02), shaded(color, cx, s * 0.06))
    img.shape([cx - r, cy - r, cx + r, base + 1], ellipse(cx, cy, r, r * 1.02), shaded(color, cx, r))
    img.shape([cx - r * 0.5, cy - r * 0.7, cx, cy], ellipse(cx - r * 0.45, cy - r * 0.35, r * 0.08, r * 0.22), () => mix(color, [255, 255, 255], 0.55))
  },
  /** @param {Raster} img @param {Scene} o */
  bowl (img, { cx, base, s, color }) {
    const hw = s * 0.3
    const d = s * 0.16
    const body = ellipse(cx, base - d, hw, d)
    img.shape([cx - hw, base - d, cx + hw, base + 1], (x, y) => Math.max(body(x, y), base - d - y), shaded(color, cx, hw))
    img.shape([cx - hw, base - d - s * 0.05, cx + hw, base - d + s * 0.05], ellipse(cx, base - d, hw, s * 0.045), () => mix(color, [250, 245, 235], 0.7))
  },
  /** @param {Raster} img @param {Scene} o */
  candle (img, { cx, base, s, color }) {
    const hw = s * 0.13
    const hh = s * 0.22
    const wax = mix(color, [250, 245, 230], 0.75)
    img.shape([cx - hw, base - hh * 2, cx + hw, base + 1], roundedRect(cx, base - hh, hw, hh, s * 0.015), shaded(wax, cx, hw))
    img.shape([cx - 3, base - hh * 2 - s * 0.05, cx + 3, base - hh * 2], roundedRect(cx, base - hh * 2 - s * 0.025, 1.2, s * 0.025, 1), () => [40, 35, 30])
    img.shape([cx - s * 0.03, base - hh * 2 - s * 0.14, cx + s * 0.03, base - hh * 2 - s * 0.03], ellipse(cx, base - hh * 2 - s * 0.085, s * 0.018, s * 0.045), () => [255, 196, 80])
  },
  /** @param {Raster} img @param {Scene} o */
  ring (img, { cx, base, s, color }) {
    const metal = color[0] > color[2] ? [222, 184, 96] : [205, 208, 214]
    const r = s * 0.17
    img.shape([cx - r * 1.3, base - r * 2.5, cx + r * 1.3, base + s * 0.05], ring(cx, base - r * 1.1, r, s * 0.022, 1.05), shaded(/** @type {Rgb} */ (metal), cx, r))
    img.shape([cx - s * 0.06, base - r * 2.18 - s * 0.06, cx + s * 0.06, base - r * 2.18 + s * 0.06], ellipse(cx, base - r * 2.18, s * 0.05, s * 0.045), shaded(color, cx, s * 0.05))
  },
  /** @param {Raster} img @param {Scene} o */
  necklace (img, { cx, base, s, color, random }) {
    const bead = hsl(random() * 360, 0.2, 0.85)
    for (let a = 0.15; a < Math.PI - 0.1; a += 0.11) {
      const x = cx + Math.cos(a) * s * 0.32
      const y = base - s * 0.5 + Math.sin(a) * s * 0.36
      img.shape([x - 12, y - 12, x + 12, y + 12], ellipse(x, y, s * 0.018, s * 0.018), shaded(bead, x, s * 0.02))
    }
    img.shape([cx - s * 0.07, base - s * 0.16, cx + s * 0.07, base + 1], ellipse(cx, base - s * 0.08, s * 0.055, s * 0.075), shaded(color, cx, s * 0.06))
  },
  /** @param {Raster} img @param {Scene} o */
  plant (img, { cx, base, s, color, random }) {
    const hw = s * 0.16
    const hh = s * 0.15
    const leaf = hsl(100 + random() * 50, 0.45, 0.32 + random() * 0.1)
    for (let i = 0; i < 7; i++) {
      const a = -Math.PI / 2 + (i - 3) * 0.38
      const x = cx + Math.cos(a) * s * 0.14
      const y = base - hh * 2 + Math.sin(a) * s * 0.14
      img.shape([x - s * 0.12, y - s * 0.12, x + s * 0.12, y + s * 0.12], ellipse(x, y, s * 0.05, s * 0.1), shaded(leaf, x, s * 0.06))
    }
    // A tapered pot: the half-width shrinks towards the base.
    const pot = (/** @type {number} */ x, /** @type {number} */ y) => {
      const t = (y - (base - hh * 2)) / (hh * 2)
      return Math.max(Math.abs(x - cx) - hw * (1 - 0.22 * t), Math.abs(y - (base - hh)) - hh)
    }
    img.shape([cx - hw - 2, base - hh * 2 - 2, cx + hw + 2, base + 2], pot, shaded(color, cx, hw))
  },
  /** @param {Raster} img @param {Scene} o */
  tote (img, { cx, base, s, color }) {
    const hw = s * 0.24
    const hh = s * 0.25
    const canvasColor = mix(color, [236, 226, 206], 0.7)
    img.shape([cx - hw, base - hh * 2 - s * 0.2, cx + hw, base - hh * 2 + 10], ring(cx, base - hh * 2, s * 0.13, s * 0.012, 1.3), () => mix(color, [60, 50, 40], 0.3))
    img.shape([cx - hw, base - hh * 2, cx + hw, base + 1], roundedRect(cx, base - hh, hw, hh, s * 0.01), shaded(canvasColor, cx, hw))
    img.shape([cx - s * 0.1, base - hh * 1.4, cx + s * 0.1, base - hh * 0.6], ellipse(cx, base - hh, s * 0.08, s * 0.08), () => color)
  },
  /** @param {Raster} img @param {Scene} o */
  print (img, { cx, base, s, color, random }) {
    const hw = s * 0.3
    const hh = s * 0.38
    const cy = base - hh
    img.shape([cx - hw, cy - hh, cx + hw, base + 1], roundedRect(cx, cy, hw, hh, 2), () => [48, 40, 34])
    img.shape([cx - hw, cy - hh, cx + hw, base], roundedRect(cx, cy, hw * 0.88, hh * 0.9, 0), () => [246, 243, 236])
    for (let i = 0; i < 4; i++) {
      const x = cx + (random() - 0.5) * hw
      const y = cy + (random() - 0.5) * hh
      const r = s * (0.05 + random() * 0.09)
      const c = hsl((color[0] + i * 70) % 360, 0.5, 0.55)
      img.shape([x - r, y - r, x + r, y + r], (px, py) => Math.max(ellipse(x, y, r, r)(px, py), Math.abs(px - cx) - hw * 0.78, Math.abs(py - cy) - hh * 0.8), () => c)
    }
  },
  /** @param {Raster} img @param {Scene} o */
  soap (img, { cx, base, s, color, random }) {
    for (let i = 0; i < 3; i++) {
      const hw = s * (0.2 - i * 0.015)
      const hh = s * 0.055
      const cy = base - hh - i * hh * 2.05
      const x = cx + (random() - 0.5) * s * 0.05
      const c = mix(hsl((color[0] + i * 40) % 360, 0.3, 0.7), [255, 255, 255], 0.2)
      img.shape([x - hw - 2, cy - hh - 2, x + hw + 2, cy + hh + 2], roundedRect(x, cy, hw, hh, s * 0.03), shaded(c, x, hw))
    }
  }
}
