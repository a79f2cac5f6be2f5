/** Where the global setup leaves the addresses of the shared test servers for the test files. */
import path from 'node:path';

/** Each jest run has its own state folder (several runs may share a machine). */
export const TEST_RUNS_DIR = path.resolve(__dirname, '../../.data/test-runs');

export function testStateFile(): string {
  const file = process.env.PAYOUTS_TEST_STATE_FILE;
  if (!file) throw new Error('PAYOUTS_TEST_STATE_FILE is not set: run integration tests through jest (npm test)');
  return file;
}

export interface TestServices {
  adminDatabaseUrl: string;
  /** A migrated database that test files copy (CREATE DATABASE … TEMPLATE) or use directly. */
  templateDatabase: string;
  databaseUrl: string;
  temporalAddress: string;
}
