/** deploy/prometheus and deploy/grafana: the rules pass `promtool check rules` and their own unit
 * tests (`promtool test rules`), the Prometheus config passes `promtool check config` and scrapes
 * the compose services on their ports, and the Grafana dashboard is well formed and provisioned
 * with the datasource its panels name. promtool comes with Debian's `prometheus` package; without
 * it only the promtool checks are skipped, with a warning. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const yaml = <T>(path: string) => parse(read(path), { merge: true }) as T;

interface Rule { alert: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const rules = yaml<{ groups: { name: string; rules: Rule[] }[] }>('deploy/prometheus/alerts.yml').groups.flatMap((g) => g.rules);
const alert = (name: string): Rule => {
  const found = rules.find((r) => r.alert === name);
  if (!found) throw new Error(`alerts.yml has no alert ${name}`);
  return found;
};

describe('promtool', () => {
  const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
  if (!hasPromtool) {
    console.warn('SKIPPED: promtool is not installed (apt-get install prometheus): alerts.yml and prometheus.yml are not checked by promtool');
  }
  const promtool = (...args: string[]) => spawnSync('promtool', args, { cwd: join(root, 'deploy/prometheus'), encoding: 'utf8', timeout: 60_000 });
  const ok = (result: ReturnType<typeof promtool>) => ({ status: result.status, output: result.status === 0 ? '' : result.stdout + result.stderr });

  (hasPromtool ? test : test.skip)('when promtool checks alerts.yml, then every rule is valid', () => {
    expect(ok(promtool('check', 'rules', 'alerts.yml'))).toEqual({ status: 0, output: '' });
  });

  (hasPromtool ? test : test.skip)('when promtool runs the alerts\' unit tests, then each alert fires when its condition holds long enough, and not before', () => {
    expect(ok(promtool('test', 'rules', 'alerts.test.yml'))).toEqual({ status: 0, output: '' });
  });

  (hasPromtool ? test : test.skip)('when promtool checks prometheus.yml, then the config and the rules file it loads are valid', () => {
    expect(ok(promtool('check', 'config', 'prometheus.yml'))).toEqual({ status: 0, output: '' });
  });
});

describe('alerts.yml', () => {
  test('when read, then it has the issue\'s alerts, each with a severity, a summary and a description', () => {
    for (const name of ['PayoutsParked', 'PayoutProcessingTooLong', 'ReconTransferNotInApp', 'TransfersPausedForAnHour', 'WebhookClientErrors', 'ScheduleNotRunning', 'PayoutBacklogEtaHigh', 'PlatformBalanceShort', 'ProviderRateLimited']) {
      const r = alert(name);
      expect([name, r.labels?.severity]).toEqual([name, expect.stringMatching(/^(warning|critical)$/)]);
      expect(r.annotations?.summary).toBeTruthy();
      expect(r.annotations?.description).toBeTruthy();
    }
  });

  test('when the thresholds are read, then they are the issue\'s: parked for 10 min, processing over 30 min, paused over an hour, a Schedule late by twice its cadence, any transfer-not-in-app', () => {
    expect(alert('PayoutsParked')).toMatchObject({ for: '10m', expr: expect.stringContaining('payouts_by_status{status="parked"}') });
    expect(alert('PayoutProcessingTooLong').expr).toMatch(/payouts_oldest_processing_age_seconds\) > 1800$/);
    expect(alert('TransfersPausedForAnHour').expr).toMatch(/payouts_transfers_paused_seconds\) > 3600$/);
    expect(alert('ScheduleNotRunning').expr.replace(/\s+/g, ' ')).toContain('payouts_schedule_last_run_age_seconds) > 2 * max by (schedule) (payouts_schedule_interval_seconds)');
    expect(alert('ReconTransferNotInApp').expr).toBe('max(payouts_recon_exceptions_open_by_reason{reason="transfer-not-in-app"}) > 0');
    expect(alert('WebhookClientErrors').expr).toContain('payouts_webhook_reply_seconds_count{status_class="4xx"}');
  });
});

describe('prometheus.yml', () => {
  interface Scrape { job_name: string; metrics_path?: string; dns_sd_configs?: { names: string[]; type: string; port: number }[] }
  const config = yaml<{ rule_files: string[]; scrape_configs: Scrape[] }>('deploy/prometheus/prometheus.yml');
  const compose = yaml<{ services: Record<string, { environment?: Record<string, unknown>; volumes?: string[]; ports?: string[] }> }>('docker-compose.yml');
  const job = (name: string) => config.scrape_configs.find((s) => s.job_name === name);

  test('when read, then it scrapes /metrics of every API and worker replica by their compose service names and ports (the API\'s admin port, never published)', () => {
    const api = compose.services.api;
    expect(api?.environment?.ADMIN_PORT).toBeDefined();
    expect(api?.environment?.ADMIN_PORT).not.toBe(api?.environment?.API_PORT);
    expect((api?.ports ?? []).filter((p) => p.endsWith(`:${String(api?.environment?.ADMIN_PORT)}`))).toEqual([]);
    expect(job('payouts-api')).toMatchObject({ metrics_path: '/metrics', dns_sd_configs: [{ names: ['api'], type: 'A', port: Number(api?.environment?.ADMIN_PORT) }] });
    expect(job('payouts-worker')).toMatchObject({ metrics_path: '/metrics', dns_sd_configs: [{ names: ['worker'], type: 'A', port: Number(compose.services.worker?.environment?.WORKER_HEALTH_PORT) }] });
  });

  test('when compose mounts it, then the rules file it loads is mounted beside it', () => {
    const volumes = compose.services.prometheus?.volumes ?? [];
    expect(volumes).toContain('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    for (const file of config.rule_files) expect(volumes).toContain(`./deploy/prometheus/${file}:/etc/prometheus/${file}:ro`);
  });
});

describe('the Grafana dashboard', () => {
  interface Target { expr: string; refId: string; datasource?: { uid: string } }
  interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource?: { uid: string }; targets?: Target[] }
  const dashboard = JSON.parse(read('deploy/grafana/dashboards/payouts.json')) as { uid: string; title: string; panels: Panel[]; schemaVersion: number };
  const datasources = yaml<{ datasources: { uid: string; type: string; url: string }[] }>('deploy/grafana/provisioning/datasources/prometheus.yml').datasources;
  const providers = yaml<{ providers: { type: string; options: { path: string } }[] }>('deploy/grafana/provisioning/dashboards/payouts.yml').providers;
  const grafana = yaml<{ services: Record<string, { volumes?: string[]; environment?: Record<string, string> }> }>('docker-compose.yml').services.grafana;
  const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');

  test('when read, then it has a uid, a title and panels with unique ids inside the 24-column grid', () => {
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.title).toBe('Payouts');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) expect([p.title, p.gridPos.x + p.gridPos.w <= 24]).toEqual([p.title, true]);
  });

  test('when its panels are read, then each queries the provisioned Prometheus datasource, by uid', () => {
    const [prometheus] = datasources;
    expect(prometheus).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
    for (const p of queryPanels) {
      expect([p.title, p.datasource?.uid]).toEqual([p.title, prometheus!.uid]);
      expect([p.title, (p.targets ?? []).length > 0]).toEqual([p.title, true]);
      for (const t of p.targets ?? []) expect([p.title, t.datasource?.uid, t.expr.length > 0]).toEqual([p.title, prometheus!.uid, true]);
    }
  });

  test('when it is read, then it shows every metric the issue lists', () => {
    const exprs = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const name of [
      'payouts_by_status', 'payouts_amount_paise_by_status', 'payouts_oldest_processing_age_seconds', 'payouts_oldest_accepted_age_seconds',
      'payouts_lost_claims_total', 'payouts_attempt_outcomes_total', 'payouts_transfers_sent_total', 'payouts_webhook_duplicates_total',
      'payouts_webhook_reply_seconds_bucket', 'payouts_recon_exceptions_open', 'payouts_transfers_paused', 'payouts_transfers_paused_seconds',
      'payouts_schedule_last_run_age_seconds', 'temporal_worker_task_slots_used', 'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
    ]) expect([name, new RegExp(`\\b${name}\\b`).test(exprs)]).toEqual([name, true]);
  });

  test('when compose runs Grafana, then the provisioning files and the dashboard folder are mounted where the provider looks', () => {
    const volumes = grafana?.volumes ?? [];
    expect(volumes).toEqual(expect.arrayContaining([
      './deploy/grafana/provisioning/datasources:/etc/grafana/provisioning/datasources:ro',
      './deploy/grafana/provisioning/dashboards:/etc/grafana/provisioning/dashboards:ro',
    ]));
    const dashboards = volumes.find((v) => v.startsWith('./deploy/grafana/dashboards:'));
    expect(dashboards?.split(':')[1]).toBe(providers[0]?.options.path);
    expect(providers[0]?.type).toBe('file');
    for (const v of volumes.filter((v) => v.startsWith('./'))) expect([v, existsSync(join(root, v.split(':')[0]!))]).toEqual([v, true]);
  });
});
