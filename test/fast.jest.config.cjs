// The fast tier (npm run test:fast): domain and use-case tests on in-memory ports, no servers started. npm test runs
// it first and stops at its first failure before the integration tiers start FerretDB and Redis.
const base = require('../package.json').jest;

const FAST_TIER_EXCLUDES = ['/test/unit/build-stamp\\.test\\.ts$'];

module.exports = {
  ...base,
  rootDir: '..',
  roots: ['<rootDir>/test/unit'],
  // build-stamp.test.ts runs `npm run build` in checkouts of its own: it belongs with the slower tiers.
  testPathIgnorePatterns: ['/node_modules/', ...FAST_TIER_EXCLUDES],
  testEnvironment: 'node',
  globalSetup: undefined,
  globalTeardown: undefined,
};
