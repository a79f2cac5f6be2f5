/** The worker as its own process (src/worker.ts, configured only by its environment): /metrics on
 * its health port answers Prometheus text with the payout series, and, with
 * WORKER_SDK_METRICS_ADDRESS set, the Temporal SDK's own worker metrics; the Grafana dashboard
 * names only series that the API and the workers really export. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { PAYOUT_SWEEP_WORKFLOW_TYPE } from '../../src/contracts/sweep';
import { freePort } from '../../src/devstack/ports';
import { createIsolatedDatabase, testServices } from '../support/db';
import { startAppProcess, type AppProcess } from '../support/processes';
import { parsePrometheusText, sampleValue, type Family } from '../unit/observability.promText';
import { eventually } from './payoutSeed';
import { startPayoutStack } from './payoutStack';

const root = join(__dirname, '..', '..');

describe('GET /metrics on the worker', () => {
  let client: Client;
  let dbUrl: string;
  const running: AppProcess[] = [];

  beforeAll(async () => {
    dbUrl = await createIsolatedDatabase();
    client = new Client({ connection: await Connection.connect({ address: testServices().temporalAddress }), namespace: 'default' });
  });

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await client?.connection.close();
  });

  async function startWorker(extra: Record<string, string>): Promise<{ port: string; taskQueue: string }> {
    const port = String(await freePort());
    const taskQueue = `obs-worker-${Date.now()}`;
    const proc = startAppProcess('src/worker.ts', {
      DATABASE_URL: dbUrl,
      TEMPORAL_ADDRESS: testServices().temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RAZORPAY_BASE_URL: 'http://127.0.0.1:9', // a sandbox address: sample keys are allowed
      WORKER_HEALTH_PORT: port,
      WORKER_SCHEDULES: 'off',
      HTTP_HOST: '127.0.0.1',
      ...extra,
    });
    running.push(proc);
    await proc.waitFor(/"msg":"worker started"/);
    return { port, taskQueue };
  }

  async function scrape(port: string): Promise<Map<string, Family>> {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await res.text());
  }

  test('when the SDK exporter is on, then the worker\'s /metrics carries our series and the SDK\'s, and the dashboard names only series that exist', async () => {
    const sdkPort = await freePort();
    const { port, taskQueue } = await startWorker({ WORKER_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}` });
    // Work for the SDK to measure: a payout sweep (workflow and activity tasks) on this worker.
    await client.workflow.execute(PAYOUT_SWEEP_WORKFLOW_TYPE, { taskQueue, workflowId: `${taskQueue}-sweep`, args: [{ batchSize: 10 }] });
    const families = await eventually(() => scrape(port), (f) => f.has('temporal_activity_execution_latency_seconds') || f.has('temporal_workflow_completed_total'), 20_000);
    expect(families.get('payouts_by_status')?.type).toBe('gauge');
    expect(sampleValue(families, 'payouts_metrics_db_up')).toBe(1);
    expect(sampleValue(families, 'payouts_sdk_metrics_up')).toBe(1);
    // The worker has no webhook route: those series are the API's alone.
    expect(families.has('payouts_webhook_reply_seconds')).toBe(false);
    const sdk = [...families.keys()].filter((n) => n.startsWith('temporal_'));
    expect(sdk).toEqual(expect.arrayContaining(['temporal_worker_task_slots_available', 'temporal_num_pollers']));
    expect(sampleValue(families, 'temporal_worker_task_slots_available', { task_queue: taskQueue, worker_type: 'ActivityWorker' })).toBeGreaterThan(0);

    // Every series a dashboard panel or an alert queries is one that the processes export.
    const api = await startPayoutStack({ name: 'obs-dashboard' });
    try {
      const apiFamilies = parsePrometheusText(await (await fetch(`${api.apiUrl}/metrics`)).text());
      const exported = new Set([...families.keys(), ...apiFamilies.keys(), 'up']);
      const queried = queriedFamilies();
      expect(queried.size).toBeGreaterThan(20);
      expect([...queried].filter((name) => !exported.has(name))).toEqual([]);
    } finally {
      await api.close();
    }
    expect(await running.at(-1)!.stop('SIGTERM')).toBe(0);
  });

  test('when the SDK exporter is off (the default), then /metrics still answers our series and says the SDK\'s are not there', async () => {
    const { port } = await startWorker({});
    const families = await scrape(port);
    expect(families.get('payouts_by_status')?.type).toBe('gauge');
    expect(sampleValue(families, 'payouts_sdk_metrics_up')).toBe(0);
    expect([...families.keys()].filter((n) => n.startsWith('temporal_'))).toEqual([]);
    // The registry's timers and observers do not hold the process: SIGTERM still stops it cleanly.
    expect(await running.at(-1)!.stop('SIGTERM')).toBe(0);
  });
});

/** Metric families named in the dashboard's and the alerts' queries (histogram and counter suffixes
 * folded onto their family; range selectors, label names and functions left out). */
function queriedFamilies(): Set<string> {
  const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/dashboards/payouts.json'), 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  const alerts = readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8');
  const exprs = [...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...[...alerts.matchAll(/expr: (\|\n(?:\s{10,}.*\n)+|.*)/g)].map((m) => m[1]!)];
  const names = new Set<string>();
  for (const expr of exprs) {
    const bare = expr.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '').replace(/"[^"]*"/g, '');
    for (const [name] of bare.matchAll(/\b(?:payouts|temporal|process|nodejs)_[a-z0-9_]+|\bup\b/g)) {
      names.add(name.replace(/_(bucket|count|sum)$/, ''));
    }
  }
  return names;
}
