// Maygh demo shop: favourites, cart counter and search filter. Plain DOM, no dependencies.
// It never touches product images: the Maygh client (/maygh.js) fills them.
(function () {
  const cartCount = document.querySelector('.cart-count')
  let inCart = 0
  document.addEventListener('click', function (event) {
    const target = event.target
    if (!(target instanceof HTMLElement)) return
    if (target.classList.contains('fav')) {
      target.classList.toggle('on')
      target.textContent = target.classList.contains('on') ? '\u2665' : '\u2661'
    } else if (target.classList.contains('add')) {
      inCart++
      if (cartCount) cartCount.textContent = String(inCart)
      target.textContent = 'Added \u2713'
    }
  })
  const search = /** @type {HTMLInputElement | null} */ (document.querySelector('.search input'))
  const count = document.querySelector('.result-count')
  if (search) {
    search.addEventListener('input', function () {
      const query = search.value.trim().toLowerCase()
      let shown = 0
      for (const card of document.querySelectorAll('.card')) {
        const match = card.textContent.toLowerCase().includes(query)
        card.classList.toggle('hidden', !match)
        if (match) shown++
      }
      if (count) count.textContent = shown + ' results'
    })
  }

  // The visitor's consent: Maygh.optOut() / optIn(), remembered across visits.
  const share = /** @type {HTMLInputElement | null} */ (document.querySelector('.share-toggle'))
  const mode = document.querySelector('.share-mode')
  const maygh = /** @type {any} */ (window).Maygh
  if (share && mode && maygh) {
    const show = function () {
      const uplink = maygh.stats().uplink
      // Sharing, or would but for the budget, Save-Data or a cellular connection.
      share.checked = uplink.mode === 'on' || (uplink.mode === 'receive-only' && uplink.why !== 'site')
      mode.textContent = uplink.mode + (uplink.why ? ': ' + uplink.why : '')
    }
    share.addEventListener('change', function () {
      if (share.checked) maygh.optIn()
      else maygh.optOut()
      show()
    })
    show()
    setInterval(show, 2000) // the budget, Save-Data and other tabs change it too
  }
})()
