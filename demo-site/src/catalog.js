/**
 * The demo shop's catalogue: product names, prices, shops, and the recipe for
 * each product's picture (kind, colour, seed, pixel size, target file size).
 * Everything derives from one seed, so the catalogue and its images are the
 * same on every run.
 */
import { prng } from './raster.js'

/** How many products the shop lists and the size range of their pictures. */
export const CATALOG_DEFAULTS = Object.freeze({
  seed: 20130415, // Maygh was presented at EuroSys in April 2013
  count: 40,
  minBytes: 12 * 1024,
  maxBytes: 285 * 1024
})

/** Product kinds: name parts, a price range in dollars, and the shops that sell them. */
const KINDS = Object.freeze({
  mug: { nouns: ['Mug', 'Coffee Cup', 'Tea Mug'], materials: ['Stoneware', 'Speckled Clay', 'Porcelain'], price: [18, 42], shops: ['ClayAndKiln', 'NorthwindCeramics'] },
  vase: { nouns: ['Bud Vase', 'Vase', 'Flower Jug'], materials: ['Ceramic', 'Glazed', 'Terracotta'], price: [28, 95], shops: ['TerraPotteryCo', 'NorthwindCeramics'] },
  bowl: { nouns: ['Serving Bowl', 'Ramen Bowl', 'Salad Bowl'], materials: ['Wheel-Thrown', 'Olive Wood', 'Stoneware'], price: [22, 70], shops: ['ClayAndKiln', 'OakAndIronWorks'] },
  candle: { nouns: ['Soy Candle', 'Pillar Candle', 'Beeswax Candle'], materials: ['Hand-Poured', 'Scented', 'Unscented'], price: [12, 38], shops: ['WickAndWhimsy', 'MossyHollowGoods'] },
  ring: { nouns: ['Stacking Ring', 'Signet Ring', 'Band'], materials: ['Sterling Silver', '14k Gold Fill', 'Brass'], price: [35, 180], shops: ['GoldenHourJewelry', 'SilverFernStudio'] },
  necklace: { nouns: ['Pendant Necklace', 'Bead Necklace', 'Charm Necklace'], materials: ['Gold', 'Freshwater Pearl', 'Silver'], price: [29, 140], shops: ['GoldenHourJewelry', 'SilverFernStudio'] },
  plant: { nouns: ['Planter', 'Succulent Pot', 'Plant Pot'], materials: ['Concrete', 'Glazed', 'Terracotta'], price: [16, 60], shops: ['MossyHollowGoods', 'TerraPotteryCo'] },
  tote: { nouns: ['Tote Bag', 'Market Bag', 'Shopper'], materials: ['Canvas', 'Linen', 'Block-Printed'], price: [24, 65], shops: ['TheLinenLoft', 'LittleBirdMakers'] },
  print: { nouns: ['Art Print', 'Poster', 'Giclée Print'], materials: ['Abstract', 'Botanical', 'Mid-Century'], price: [15, 85], shops: ['PaperMoonPrints', 'LittleBirdMakers'] },
  soap: { nouns: ['Soap Bar Set', 'Soap Trio', 'Bath Bars'], materials: ['Goat Milk', 'Lavender', 'Oatmeal'], price: [9, 28], shops: ['SudsAndPetals', 'MossyHollowGoods'] }
})

const ADJECTIVES = ['Handmade', 'Rustic', 'Minimal', 'Boho', 'Nordic', 'Vintage-Style', 'Modern', 'Cozy', 'Personalized', 'Organic']
const ASPECTS = [[1, 1], [4, 5], [5, 4], [4, 3], [3, 4]]

/**
 * @typedef {{
 *   id: string, path: string, kind: keyof typeof KINDS, name: string, shop: string,
 *   price: string, rating: number, reviews: number, freeShipping: boolean,
 *   hue: number, seed: number, width: number, height: number, targetBytes: number
 * }} Product
 */

/**
 * The catalogue: `count` products with picture recipes.
 *
 * Target sizes are log-uniform over [minBytes, maxBytes] (stratified, then
 * shuffled), which gives the mix of small and large pictures a real listing has
 * and about 3.4 MB in total for 40 products. Larger pictures get more pixels.
 *
 * @param {Partial<typeof CATALOG_DEFAULTS>} [options]
 * @returns {Product[]}
 */
export function buildCatalog (options = {}) {
  const { seed, count, minBytes, maxBytes } = { ...CATALOG_DEFAULTS, ...options }
  const random = prng(seed)
  const pick = (/** @type {readonly any[]} */ list) => list[Math.floor(random() * list.length)]
  const quantiles = Array.from({ length: count }, (_, i) => (i + 0.5) / count)
  for (let i = quantiles.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[quantiles[i], quantiles[j]] = [quantiles[j], quantiles[i]]
  }
  const kinds = /** @type {Array<keyof typeof KINDS>} */ (Object.keys(KINDS))
  return quantiles.map((q, i) => {
    const kind = kinds[i % kinds.length]
    const spec = KINDS[kind]
    const targetBytes = Math.round(Math.exp(Math.log(minBytes) + q * (Math.log(maxBytes) - Math.log(minBytes))))
    const [aw, ah] = kind === 'print' ? pick([[4, 5], [3, 4]]) : pick(ASPECTS)
    const long = Math.round((420 + 380 * q + random() * 60) / 8) * 8 // 420–860 px on the long side
    const width = aw >= ah ? long : Math.round(long * aw / ah)
    const height = aw >= ah ? Math.round(long * ah / aw) : long
    const id = `p${String(i + 1).padStart(2, '0')}`
    const low = spec.price[0]
    const high = spec.price[1]
    return {
      id,
      path: `/img/${id}.png`,
      kind,
      name: `${pick(ADJECTIVES)} ${pick(spec.materials)} ${pick(spec.nouns)}`,
      shop: pick(spec.shops),
      price: (Math.floor(low + random() * (high - low)) + pick([0, 0.5, 0.95, 0.99])).toFixed(2),
      rating: Math.round((4 + random()) * 10) / 10,
      reviews: Math.floor(3 + random() ** 2 * 2400),
      freeShipping: random() < 0.4,
      hue: Math.floor(random() * 360),
      seed: Math.floor(random() * 2 ** 31),
      width,
      height,
      targetBytes
    }
  })
}
