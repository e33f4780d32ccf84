// typescript-eslint, strict and type-aware, on everything we write in TypeScript (lib, bin, test, bench).
// An option narrowed here says why; a line silenced in code says why on the line.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'build/**', 'cdk.out/**', 'coverage/**', '**/*.js', '**/*.cjs', '**/*.mjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers and booleans print as themselves in messages; objects, undefined and null still need a decision.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => void f()` and `x => log(x)` shorthands are idiomatic; a void value used as a value is still refused.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // `const { key: _key, ...rest } = o` is how an object without a key is written: the rest is the value used.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read the API server's JSON, moto's answers and synthesized templates: untyped data by nature,
    // asserted by the test itself. `any` stays refused where it is written; reading it is allowed.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // A test that reads a value that is not there fails on that line, which is the assertion it means.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Fakes, stubs and bench sections implement asynchronous ports (CloudFormationPort, a Lease client, a section
      // runner) with synchronous work; `async` is what keeps their throws rejections, as the real implementations' are.
      '@typescript-eslint/require-await': 'off',
    },
  },
);
