import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/results.json'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  { files: ['tools/**', 'bench/**', 'test/**'], rules: { 'no-console': 'off' } },
  // Jest loads its reporters and config as CommonJS.
  { files: ['**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
