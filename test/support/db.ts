/** Databases for integration tests: each file may take its own copy of the migrated template, so
 * files never see each other's rows. */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createPool, type Db } from '../../src/db/pool';
import { testStateFile, type TestServices } from './serviceState';

export function testServices(): TestServices {
  return JSON.parse(fs.readFileSync(testStateFile(), 'utf8')) as TestServices;
}

/** A new database copied from the migrated template; returns its URL. */
export async function createIsolatedDatabase(): Promise<string> {
  const services = testServices();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: services.adminDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${services.templateDatabase}`);
  } finally {
    await admin.end();
  }
  const url = new URL(services.adminDatabaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A pool on a fresh isolated database; also points DATABASE_URL at it for code that reads config. */
export async function isolatedPool(): Promise<{ db: Db; url: string }> {
  const url = await createIsolatedDatabase();
  process.env.DATABASE_URL = url;
  return { db: createPool(url, 20), url };
}

/** For a describe block: a fresh isolated database before its tests (`isolatedPool`), its pool
 * ended after them. Read `.db` and `.url` inside the tests. */
export function isolatedPoolForSuite(): { db: Db; url: string } {
  const suite = {} as { db: Db; url: string };
  beforeAll(async () => Object.assign(suite, await isolatedPool()));
  afterAll(async () => { await suite.db?.end(); });
  return suite;
}
