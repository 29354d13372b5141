import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'charts/**', '.didyma/**', 'bench/results/**', 'dashboard/public/vendor/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', document: 'readonly', window: 'readonly', FormData: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through kernel/config only.' }],
    },
  },
  // Entry points hand the environment on (to the config, and to the tracing SDK, which reads its OTEL_* variables itself).
  { files: ['kernel/config/**', 'test/**', '**/*.test.ts', 'bench/**', 'cli/**', 'bin/**'], rules: { 'no-restricted-properties': 'off' } },
  // Black-box tests read JSON bodies of many shapes.
  { files: ['test/**', '**/*.test.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
