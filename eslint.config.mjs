import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'eslint.config.mjs',
      '.dependency-cruiser.cjs',
      'jest.config.js',
      'jest.swagger-plugin.js',
      'test/artifacts/',
      '**/dist/',
      // Generated from openapi.yaml by the client's build.
      'clients/typescript/src/generated/',
      // Apps of their own, with their own dependencies and build (bench/baselines/README.md).
      'bench/baselines/',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      'no-control-regex': 'off',
    },
  },
  {
    // Plain JavaScript of the client package: its tsconfig type-checks it (checkJs), names included.
    files: ['clients/**/*.mjs', 'clients/**/*.cjs'],
    rules: { 'no-undef': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
