/** Unit specs live beside their code; e2e specs in test/ boot the real app. */
const nestCli = require('./nest-cli.json');

const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: true }];

/**
 * The app the e2e tests boot must carry the OpenAPI metadata `nest build` gives it, so ts-jest
 * applies the same @nestjs/swagger plugin with the same options, read from nest-cli.json.
 * (Type errors are the job of `npm run typecheck`, hence no diagnostics here.)
 */
const swaggerPlugin = nestCli.compilerOptions.plugins.find((plugin) => plugin.name === '@nestjs/swagger');
const tsJestWithSwaggerPlugin = [
  'ts-jest',
  {
    tsconfig: 'tsconfig.json',
    diagnostics: false,
    astTransformers: {
      before: [{ path: '<rootDir>/jest.swagger-plugin.js', options: swaggerPlugin.options }],
    },
  },
];

module.exports = {
  testTimeout: 30000,
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
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/setup-e2e.ts'],
      transform: { '^.+\\.ts$': tsJestWithSwaggerPlugin },
    },
  ],
};
