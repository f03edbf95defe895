/**
 * Entry of the `maygh.js` bundle: transparent mode, configured by its script tag.
 *
 *   <script src="/maygh.js" data-coordinator="wss://…" async></script>
 */
import { startTransparent } from './transparent.js'
import { fromScriptTag } from './page.js'

fromScriptTag(startTransparent)
