/** The test harness's own Temporal dev server (startServices, persistent: false: what servicesMain
 * starts for every integration run) must keep its state through requests whose deadlines pass
 * mid-query. CI at f9bfdd8 lost it: 262 tests failed on "no such table: namespaces" once the SQLite
 * driver discarded the one connection of an in-memory database (a cancelled query leaves it
 * interrupted), and with it the whole database. */
import { Client, Connection } from '@temporalio/client';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServices } from '../../src/devstack/services';
import { testServices } from '../support/db';

const ROOT = path.resolve(__dirname, '../..');
const ROUNDS = 40;
const PER_ROUND = 50;

describe('the test stack\'s Temporal dev server', () => {
  test('when many requests pass their deadlines mid-query, then the namespace and the workflows started before are still there', async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-store-'));
    const services = await startServices({
      projectRoot: ROOT, stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0,
      externalDatabaseUrl: testServices().adminDatabaseUrl,
    });
    const connection = await Connection.connect({ address: services.temporalAddress });
    try {
      const client = new Client({ connection });
      for (let i = 0; i < 50; i++) await client.workflow.start('noSuchWorkflow', { taskQueue: 'nobody-polls', workflowId: `before-${i}`, args: [] });
      let cancelled = 0;
      let lostAtRound: number | null = null;
      for (let round = 0; round < ROUNDS && lostAtRound === null; round++) {
        // Deadlines of 1–8 ms: some pass before the request is read, some in the middle of its
        // queries (the case that interrupts a SQLite connection).
        await Promise.all(Array.from({ length: PER_ROUND }, async (_, k) => {
          const deadline = () => Date.now() + 1 + ((round * PER_ROUND + k) % 8);
          await connection.withDeadline(deadline(), () => client.workflow.start('noSuchWorkflow', { taskQueue: 'nobody-polls', workflowId: `burst-${round}-${k}`, args: [] }))
            .catch(() => { cancelled += 1; });
          await connection.withDeadline(deadline(), async () => { for await (const _ of client.workflow.list()) { /* read it all */ } })
            .catch(() => { cancelled += 1; });
        }));
        await connection.workflowService.describeNamespace({ namespace: 'default' }).catch(() => { lostAtRound = round; });
      }
      // The burst did cancel requests (else it proves nothing), and nothing was lost.
      expect(cancelled).toBeGreaterThan(0);
      expect({ lostAtRound }).toEqual({ lostAtRound: null });
      const before = await client.workflow.getHandle('before-7').describe();
      expect(before.status.name).toBe('RUNNING');
    } finally {
      await connection.close();
      await services.stop();
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  }, 300_000);
});
