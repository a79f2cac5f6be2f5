/** Runs before each integration test file: exposes the shared servers through the environment,
 * the way the application reads them in production. */
import fs from 'node:fs';
import { LOAD_RUN_LIMITS } from '../../src/api/rateLimit';
import { testStateFile, type TestServices } from './serviceState';

const services = JSON.parse(fs.readFileSync(testStateFile(), 'utf8')) as TestServices;
process.env.DATABASE_URL = services.databaseUrl;
process.env.TEMPORAL_ADDRESS = services.temporalAddress;
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn';
for (const [key, value] of Object.entries(LOAD_RUN_LIMITS)) process.env[key] ??= value;
