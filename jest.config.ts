import type { Config } from 'jest'
import { availableParallelism } from 'node:os'

// ts-jest's ESM preset; run with NODE_OPTIONS=--experimental-vm-modules (see package.json).
const common = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The package by name, as examples/sam-app imports it: the paths of tsconfig.json.
    '^middy-idempotency$': '<rootDir>/src/index.ts',
    '^middy-idempotency/(batch|event|dynamodb|redis|store)$': '<rootDir>/src/$1.ts'
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }] as [string, Record<string, unknown>] },
  setupFiles: ['<rootDir>/__tests__/support/env.ts']
}

const config: Config = {
  // Real servers on a shared 2-core CI machine: Jest's 5 s default is a guess about load, not
  // about the code (a Redis Cluster test outlasted it under load). A test's own timeout still wins.
  testTimeout: 60_000,
  // Two test files at a time at least: Jest's default on a 2-core machine is one (the cores less
  // one), and integration files spend much of their time waiting on DynamoDB Local and Redis,
  // which run in processes of their own. Files share those servers safely: each makes its own
  // tables and key prefixes (__tests__/support/dynamodb.ts, redis.ts).
  maxWorkers: Math.max(2, availableParallelism()),
  // Tests a file marks `test.concurrent` wait on timers they cannot skip (a durable execution's
  // `wait`, whole seconds; a hung store call given up at its deadline): ten at a time instead of
  // Jest's five overlap those waits. Each such test has its own table or key prefix.
  maxConcurrency: 10,
  // A first run (CI, a fresh clone) starts the slowest files first, as later runs do.
  testSequencer: '<rootDir>/__tests__/support/sequencer.mjs',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/__tests__/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/__tests__/integration/**/*.test.ts', '<rootDir>/__tests__/chaos/**/*.test.ts', '<rootDir>/__tests__/features/**/*.steps.ts'],
      globalSetup: '<rootDir>/__tests__/support/global-setup.mjs',
      globalTeardown: '<rootDir>/__tests__/support/global-teardown.mjs'
    }
  ]
}

export default config
