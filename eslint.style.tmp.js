import tseslint from 'typescript-eslint'
import stylistic from '@stylistic/eslint-plugin'
export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/'] },
  { files: ['**/*.ts', '**/*.mts'], languageOptions: { parser: tseslint.parser } },
  stylistic.configs.customize({ semi: false, quotes: 'single', indent: 2, commaDangle: 'never', braceStyle: '1tbs', arrowParens: true, jsx: false })
)
