import js from '@eslint/js'
import stylistic from '@stylistic/eslint-plugin'
import tseslint from 'typescript-eslint'

// The formatter: ESLint's stylistic rules, fixed by `npm run format` and checked by `npm run lint`
// (so CI fails on unformatted code). The settings are the code's own style: no semicolons, single
// quotes, two-space indent, a space before a function's parentheses, one-line statements allowed.
const formatting = [
  stylistic.configs.customize({ semi: false, quotes: 'single', indent: 2, commaDangle: 'never', braceStyle: '1tbs', arrowParens: true, jsx: false, quoteProps: 'as-needed' }),
  {
    rules: {
      '@stylistic/space-before-function-paren': ['error', 'always'],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/operator-linebreak': ['error', 'after', { overrides: { '?': 'before', ':': 'before', '|': 'before', '&': 'before' } }],
      '@stylistic/list-style': 'off',
      '@stylistic/max-statements-per-line': 'off',
      '@stylistic/multiline-ternary': 'off',
      '@stylistic/indent-binary-ops': 'off'
    }
  }
]

// Lines of at most 120 characters, so code reads without sideways scrolling. URLs may run
// longer, since a link cannot be split. Strings, templates and comments get no exemption: a long message
// is split with `+` or a template over lines, and a long comment is re-flowed.
// __tests__/ and bench/ are not covered yet.
const lineLength = {
  files: ['src/**', 'scripts/**', 'examples/**'],
  rules: {
    '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true }]
  }
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/', '**/.aws-sam/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', globalThis: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error'
    }
  },
  ...formatting,
  lineLength
)
