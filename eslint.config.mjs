// Lint (npm run lint): typescript-eslint's recommended rules over the TypeScript sources, nothing stylistic.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.data/', 'test/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // Answers of the relay's own JSON API are read as `any` where they are only asserted on or printed (tests, the
      // CLI, the bench); every boundary that trusts data parses it with zod instead.
      '@typescript-eslint/no-explicit-any': 'off',
      // The codebase marks a deliberately unused binding with a leading underscore (`{ secret: _dropped, ...rest }`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
    // CommonJS files (the dependency-cruiser config, the build step that runs before anything is compiled) load with require().
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
