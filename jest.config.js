/* Two projects: unit tests need no servers; integration tests share one Temporal dev server and one
 * PostgreSQL started by the global setup (test/support/globalSetup.ts). */
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
  // ES-module-only dependencies (content-disposition, under @fastify/static for the Swagger UI) are
  // compiled to CommonJS for jest's runtime; node itself loads them as they are.
  '^.+/node_modules/content-disposition/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
};
const common = {
  testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'],
  transformIgnorePatterns: ['/node_modules/(?!content-disposition/)'],
};

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/globalSetup.ts',
      globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
      setupFiles: ['<rootDir>/test/support/integrationEnv.ts'],
    },
  ],
  testTimeout: 120_000,
  // The Temporal SDK's native runtime keeps the process alive after the last test
  // (sdk-typescript#928); every server the tests started is already stopped by globalTeardown.
  forceExit: true,
};
