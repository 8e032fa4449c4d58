/** Unit specs live beside their code; e2e specs in test/ boot the real app. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: true }];

module.exports = {
  testTimeout: 30000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/setup-e2e.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
};
