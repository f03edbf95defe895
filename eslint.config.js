// Lint: neostandard (the `standard` style this code is written in) over every
// component, with browser globals where code runs in a page. Types are checked
// separately, by `tsc -p jsconfig.json`; both run in `npm test`.
import globals from 'globals'
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ignores: ['dist/**', '.tmp/**', 'demo-site/.generated/**', 'demo-site/public/**']
  }),
  {
    files: ['client/src/**/*.js', 'demo-site/assets/**/*.js'],
    languageOptions: { globals: globals.browser }
  }
]
