// Import rules the layout depends on (npm run lint): surfaces lean on relay-core, never on each other; the core
// leans on no surface; nothing ships code that imports test/ or a dev dependency; and nothing imports in a circle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: the files in it cannot be read, loaded or tested one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'surfaces-apart',
      severity: 'error',
      comment:
        'bot/ and mcp/ are separate surfaces over relay-core/: what both need belongs in relay-core/ or is injected.',
      from: { path: '^(bot|mcp)/' },
      to: { path: '^(bot|mcp)/', pathNot: '^$1/' },
    },
    {
      name: 'core-not-surfaces',
      severity: 'error',
      comment: 'relay-core/ knows no surface and no script: they depend on it, never the other way round.',
      from: { path: '^relay-core/' },
      to: { path: '^(bot|mcp|scripts)/' },
    },
    {
      name: 'only-tests-import-test',
      severity: 'error',
      comment: 'test/ is not shipped: code outside it must not import it.',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'shipped-code-not-to-dev-deps',
      severity: 'error',
      comment:
        'The relay, the CLI and the MCP server run on the dependencies alone: a package they load belongs in dependencies (the bench and the fake Slack are dev tools).',
      from: { path: '^(relay-core|bot|mcp|scripts)/', pathNot: '^scripts/(bench[^/]*|fake-slack/.*)$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
