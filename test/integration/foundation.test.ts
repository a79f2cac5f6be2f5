import { loadConfig } from '../../src/config/config';
import { createGateway } from '../../src/gateway';
import { OrderIdAttr } from '../../src/contracts/searchAttributes';
import { probeWorkflowId } from '../../src/contracts/probe';
import type { Db } from '../../src/db/pool';
import { migrate } from '../../src/db/migrate';
import { probeWorkflow } from '../../src/workflows/probe';
import { isolatedPool } from '../support/db';
import { startTestWorker, type TestTemporal } from '../support/temporal';

describe('foundation: a real Temporal dev server and a real PostgreSQL', () => {
  let db: Db;
  let temporal: TestTemporal;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    const config = loadConfig();
    temporal = await startTestWorker({ db, config, gateway: createGateway(config) });
  });

  afterAll(async () => {
    await temporal?.close();
    await db?.end();
  });

  test('when the probe workflow runs, then its activity writes a PostgreSQL row and reads it back', async () => {
    const tag = `t${Date.now()}`;
    const result = await temporal.client.workflow.execute(probeWorkflow, {
      workflowId: probeWorkflowId(tag),
      taskQueue: temporal.taskQueue,
      args: [{ message: `hello ${tag}` }],
      typedSearchAttributes: [{ key: OrderIdAttr, value: tag }],
    });
    expect(result.readBack).toBe(`hello ${tag}`);
    const { rows } = await db.query('SELECT workflow_id, message FROM system_probes WHERE id = $1', [result.rowId]);
    expect(rows).toEqual([{ workflow_id: probeWorkflowId(tag), message: `hello ${tag}` }]);
  });

  test('when a workflow carries a search attribute, then the client list API finds it by that attribute', async () => {
    const tag = `s${Date.now()}`;
    await temporal.client.workflow.execute(probeWorkflow, {
      workflowId: probeWorkflowId(tag),
      taskQueue: temporal.taskQueue,
      args: [{ message: 'visible' }],
      typedSearchAttributes: [{ key: OrderIdAttr, value: tag }],
    });
    // Visibility is eventually consistent on the dev server: poll briefly.
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const wf of temporal.client.workflow.list({ query: `OrderId = "${tag}"` })) found.push(wf.workflowId);
      if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toEqual([probeWorkflowId(tag)]);
  });

  test('when migrations run again, then nothing is applied twice', async () => {
    expect(await migrate(db)).toEqual([]);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(rows[0].n).toBeGreaterThanOrEqual(5);
  });
});
