/**
 * A tiny RGB raster with the few drawing operations the product pictures need:
 * gradients, anti-aliased shapes given by a signed distance, soft shadows and
 * seeded grain. Colours are [r, g, b] arrays of 0–255 numbers.
 */

/** @typedef {[number, number, number]} Rgb */

/**
 * mulberry32: a small, fast seeded PRNG; the same seed gives the same sequence everywhere.
 *
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
export function prng (seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Blend `b` over `a` by `t` (0 → a, 1 → b).
 * @param {Rgb} a
 * @param {Rgb} b
 * @param {number} t
 * @returns {Rgb}
 */
export function mix (a, b, t) {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

/**
 * Colour from hue (0–360), saturation and lightness (0–1).
 * @param {number} h
 * @param {number} s
 * @param {number} l
 * @returns {Rgb}
 */
export function hsl (h, s, l) {
  const k = (/** @type {number} */ n) => (n + h / 30) % 12
  const a = s * Math.min(l, 1 - l)
  const f = (/** @type {number} */ n) => 255 * (l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1)))
  return [f(0), f(8), f(4)]
}

export class Raster {
  /**
   * @param {number} width
   * @param {number} height
   */
  constructor (width, height) {
    this.width = width
    this.height = height
    this.data = new Uint8ClampedArray(width * height * 3)
  }

  /**
   * Fill each row with one colour, `colorOfRow(y)` (backdrops and table tops
   * vary top to bottom only, which is also what PNG compresses best).
   * @param {(y: number) => Rgb} colorOfRow
   */
  fillRows (colorOfRow) {
    const { width, height, data } = this
    for (let y = 0; y < height; y++) {
      const c = colorOfRow(y)
      for (let i = y * width * 3, end = i + width * 3; i < end; i += 3) {
        data[i] = c[0]
        data[i + 1] = c[1]
        data[i + 2] = c[2]
      }
    }
  }

  /**
   * Paint a shape given by a signed distance (negative inside, in pixels), with a
   * one-pixel anti-aliased edge, inside the bounding box [x0, x1) × [y0, y1).
   *
   * @param {[number, number, number, number]} box x0, y0, x1, y1
   * @param {(x: number, y: number) => number} distance
   * @param {(x: number, y: number) => Rgb} colorAt
   */
  shape (box, distance, colorAt) {
    const { width, height, data } = this
    const [x0, y0, x1, y1] = [Math.max(0, Math.floor(box[0])), Math.max(0, Math.floor(box[1])),
      Math.min(width, Math.ceil(box[2])), Math.min(height, Math.ceil(box[3]))]
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const cover = Math.min(1, Math.max(0, 0.5 - distance(x + 0.5, y + 0.5)))
        if (cover === 0) continue
        const c = colorAt(x, y)
        const i = (y * width + x) * 3
        data[i] += (c[0] - data[i]) * cover
        data[i + 1] += (c[1] - data[i + 1]) * cover
        data[i + 2] += (c[2] - data[i + 2]) * cover
      }
    }
  }

  /**
   * Darken an elliptical area with a soft falloff (a contact shadow).
   *
   * @param {number} cx
   * @param {number} cy
   * @param {number} rx
   * @param {number} ry
   * @param {number} strength 0–1, darkening at the centre
   */
  shadow (cx, cy, rx, ry, strength) {
    const { width, data } = this
    for (let y = Math.max(0, Math.floor(cy - ry)); y < Math.min(this.height, cy + ry); y++) {
      for (let x = Math.max(0, Math.floor(cx - rx)); x < Math.min(width, cx + rx); x++) {
        const q = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2
        if (q >= 1) continue
        const k = 1 - strength * (1 - q) ** 2
        const i = (y * width + x) * 3
        data[i] *= k
        data[i + 1] *= k
        data[i + 2] *= k
      }
    }
  }

  /**
   * A copy with seeded grain: each pixel, with probability `density`, gets a
   * random offset of up to ±`amplitude` per channel. Density is the knob that
   * sets how well the picture compresses.
   *
   * @param {number} seed
   * @param {number} density 0–1
   * @param {number} amplitude
   * @returns {Uint8Array}
   */
  withGrain (seed, density, amplitude) {
    const out = new Uint8Array(this.data)
    if (density <= 0) return out
    const random = prng(seed)
    for (let i = 0; i < out.length; i += 3) {
      if (random() >= density) continue
      const d = (random() - 0.5) * 2 * amplitude
      out[i] = clamp(out[i] + d + (random() - 0.5) * amplitude)
      out[i + 1] = clamp(out[i + 1] + d + (random() - 0.5) * amplitude)
      out[i + 2] = clamp(out[i + 2] + d + (random() - 0.5) * amplitude)
    }
    return out
  }
}

/**
 * @param {number} v
 * @returns {number}
 */
function clamp (v) {
  return v < 0 ? 0 : v > 255 ? 255 : v
}

/**
 * Signed distance to an ellipse (approximate, good enough for anti-aliasing).
 * @param {number} cx
 * @param {number} cy
 * @param {number} rx
 * @param {number} ry
 * @returns {(x: number, y: number) => number}
 */
export function ellipse (cx, cy, rx, ry) {
  const r = Math.min(rx, ry)
  return (x, y) => {
    const u = (x - cx) / rx
    const v = (y - cy) / ry
    return (Math.sqrt(u * u + v * v) - 1) * r
  }
}

/**
 * Signed distance to a rounded rectangle centred at (cx, cy) with half-sizes hw, hh.
 * @param {number} cx
 * @param {number} cy
 * @param {number} hw
 * @param {number} hh
 * @param {number} radius
 * @returns {(x: number, y: number) => number}
 */
export function roundedRect (cx, cy, hw, hh, radius) {
  return (x, y) => {
    const qx = Math.abs(x - cx) - hw + radius
    const qy = Math.abs(y - cy) - hh + radius
    const ox = Math.max(qx, 0)
    const oy = Math.max(qy, 0)
    return Math.sqrt(ox * ox + oy * oy) + Math.min(Math.max(qx, qy), 0) - radius
  }
}

/**
 * Signed distance to a ring (annulus) of radius r and half-thickness t, squashed by `squash` vertically.
 * @param {number} cx
 * @param {number} cy
 * @param {number} r
 * @param {number} t
 * @param {number} [squash]
 * @returns {(x: number, y: number) => number}
 */
export function ring (cx, cy, r, t, squash = 1) {
  return (x, y) => {
    const dy = (y - cy) / squash
    return Math.abs(Math.sqrt((x - cx) ** 2 + dy * dy) - r) - t
  }
}
