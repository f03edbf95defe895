/**
 * Entry of the `maygh-elements.js` bundle: marked-element mode, configured by its script tag.
 *
 *   <script src="/maygh-elements.js" data-coordinator="wss://…" defer></script>
 */
import { startElements } from './elements.js'
import { fromScriptTag } from './page.js'

fromScriptTag(startElements)
