/** Unit specs live beside their code; e2e specs in test/ boot the real app. */
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const nestCli = require('./nest-cli.json');

/** Each file on its own (`isolatedModules` in this tsconfig): fast, and enough for the unit specs. */
const tsJest = ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.isolated.json' }];

/**
 * The app the e2e tests boot must carry the OpenAPI metadata `nest build` gives it, so src/ is
 * compiled for them with the same @nestjs/swagger plugin and options, read from nest-cli.json
 * (jest.swagger-plugin.js). The specs and their helpers need no plugin: they compile as the unit
 * specs do.
 */
const swaggerPlugin = nestCli.compilerOptions.plugins.find((plugin) => plugin.name === '@nestjs/swagger');
const withSwaggerPlugin = ['<rootDir>/jest.swagger-plugin.js', swaggerPlugin.options];
const SOURCES = `^${join(__dirname, 'src').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/.+\\.ts$`;

/**
 * `npm run test:quick` (TEST_QUICK=1): the unit specs and the e2e specs that run wholly inside
 * Jest's processes. An e2e spec that starts anything else (the service or a CLI as a child
 * process, Chromium, Prometheus, PostgreSQL or Redis servers of its own) imports
 * node:child_process or playwright-core, itself or through the helpers of test/support it
 * imports (process.ts, browser.ts, servers.ts): such a spec is left out. The quick run's test
 * environment (test/support/e2e-environment.ts) fails a spec that starts a process all the same.
 */
const QUICK = Boolean(process.env.TEST_QUICK);
const STARTS_PROCESSES = /from '(node:)?child_process'|from 'playwright-core'/;
const IMPORTS = /from '(\.\.?\/[^']+)'/g;
function startsProcesses(file, seen = new Set()) {
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  if (STARTS_PROCESSES.test(source)) return true;
  return [...source.matchAll(IMPORTS)]
    .map(([, path]) => join(dirname(file), `${path}.ts`))
    .some((imported) => imported.startsWith(join(__dirname, 'test')) && startsProcesses(imported, seen));
}
const outOfProcessSpecs = () =>
  readdirSync(join(__dirname, 'test'))
    .filter((file) => file.endsWith('.e2e-spec.ts') && startsProcesses(join(__dirname, 'test', file)))
    .map((file) => `<rootDir>/test/${file.replace(/\./g, '\\.')}$`);

module.exports = {
  testTimeout: 30000,
  // One worker per core (Jest's default leaves one core to itself: a single worker on two
  // cores); the child processes, browsers and servers the e2e tests start use the cores too, so
  // more workers only add contention. Jest starts the files that took longest last time first.
  maxWorkers: '100%',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      testEnvironment: '<rootDir>/test/support/e2e-environment.ts',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...(QUICK ? outOfProcessSpecs() : [])],
      setupFilesAfterEnv: ['<rootDir>/test/support/setup-e2e.ts'],
      transform: { [SOURCES]: withSwaggerPlugin, '^.+\\.ts$': tsJest },
    },
  ],
};
