/** Readiness: may this process take work? The API needs its database (migrated to the code's
 * latest file) and Temporal; the worker also needs the Schedules it owns. `/health` only says the
 * process is alive and never touches a dependency, so a database outage does not get it killed. */
import type { Client } from '@temporalio/client';
import { readMigrations } from '../db/migrate';
import type { Db } from '../db/pool';
import { SCHEDULE_SEEN_GRACE_MS, type ScheduleSighting, type ScheduleWatch } from './scheduleWatch';

export interface ReadinessCheck { ok: boolean; detail: string }
export interface Readiness { ready: boolean; checks: Record<string, ReadinessCheck> }

export interface ReadinessDeps {
  db: Pick<Db, 'query'>;
  temporal?: Client;
  /** Schedules that must exist (the worker's side). */
  schedules?: ScheduleWatch;
  /** Extra process-specific checks, e.g. the worker's own state. */
  extra?: () => Record<string, ReadinessCheck>;
}

const CHECK_TIMEOUT_MS = 2_000;

async function check(work: () => Promise<string>): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      work(),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS); }),
    ]);
    return { ok: true, detail };
  } catch (err) {
    return { ok: false, detail: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

let latestMigration: Promise<number> | undefined;
/** The newest migration this code ships (read once per process). */
function codeMigrationVersion(): Promise<number> {
  latestMigration ??= readMigrations().then((ms) => Math.max(0, ...ms.map((m) => m.version)));
  return latestMigration;
}

export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const checks: Record<string, Promise<ReadinessCheck>> = {
    database: check(async () => { await deps.db.query('SELECT 1'); return 'reachable'; }),
    migrations: check(async () => {
      const wanted = await codeMigrationVersion();
      const { rows } = await deps.db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
      const applied = rows[0]?.version ?? 0;
      if (applied < wanted) throw new Error(`database is at migration ${applied}, the code needs ${wanted}: run npm run migrate`);
      return `at ${applied}`;
    }),
  };
  const temporal = deps.temporal;
  checks.temporal = temporal
    ? check(async () => { await temporal.workflowService.getSystemInfo({}); return 'reachable'; })
    : Promise.resolve({ ok: false, detail: 'no Temporal client in this process' });
  const sightings = deps.schedules?.look() ?? Promise.resolve([]);
  const settled = Object.fromEntries(await Promise.all(Object.entries(checks).map(async ([k, p]) => [k, await p] as const)));
  const schedules = Object.fromEntries((await sightings).map((s) => [`schedule:${s.id}`, scheduleReadiness(s, Date.now())]));
  const all = { ...settled, ...schedules, ...deps.extra?.() };
  return { ready: Object.values(all).every((c) => c.ok), checks: all };
}

/** Readiness from a sighting: present is ready; missing is not; a describe Temporal did not answer
 * is ready for SCHEDULE_SEEN_GRACE_MS after the Schedule was last seen, and says so. */
export function scheduleReadiness(s: ScheduleSighting, nowMs: number, graceMs = SCHEDULE_SEEN_GRACE_MS): ReadinessCheck {
  const { answer } = s;
  if (answer.kind === 'described') return { ok: true, detail: answer.description.state.paused ? 'present (paused)' : 'present' };
  if (answer.kind === 'missing') return { ok: false, detail: 'missing: a worker with WORKER_SCHEDULES=on creates it at start-up' };
  const age = s.lastSeenAt === null ? null : nowMs - s.lastSeenAt;
  if (age !== null && age <= graceMs) {
    return { ok: true, detail: `present ${Math.round(age / 1000)} s ago; Temporal did not answer now (${answer.error})` };
  }
  return { ok: false, detail: answer.error };
}
