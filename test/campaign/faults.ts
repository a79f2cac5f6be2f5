/** The campaign's fault schedule, carried out against the running topology at its planned times,
 * and the ops engineer's part (retrying payouts parked while an account was suspended). Every fault
 * that actually happened is counted here (the sandbox counts its own); `clearAll` undoes whatever
 * is still in force so the system can quiesce. */
import type { Client } from '@temporalio/client';
import { PAYOUT_WORKFLOW_TYPE } from '../../src/contracts/payout';
import { freePort } from '../../src/devstack/ports';
import type { Topology } from '../../src/devstack/topologyTypes';
import { seededRandom } from '../../src/sandbox/faults';
import { restoreDatabase, snapshotDatabase } from '../../src/devstack/dbRollback';
import type { WorkerBuild } from '../../src/devstack/rollingDeploy';
import { callRetrying, eventually, holdClientWrites, sleep } from './calls';
import type { CampaignPlan, PlannedFault } from './plan';
import { closeOpenBatches, type World } from './workload';

export interface FaultRunner {
  /** Counts by `<what>` of the faults this process carried out. */
  readonly fired: Record<string, number>;
  /** Problems a fault ran into (a worker that would not restart…): reported, never hidden. */
  readonly problems: string[];
  /** Resolves when every planned fault has been carried out and undone. */
  done: Promise<void>;
  /** Undoes whatever is still in force (faults cleared, delivery on, balance back, switch resumed). */
  clearAll(): Promise<void>;
  /** Stops the ops loop; resolves once its last round is over. */
  stopOps(): Promise<void>;
}

export const PLATFORM_BALANCE_PAISE = 100_000_000_000;

export function startFaults(t: Topology, plan: CampaignPlan, world: World, temporal: Client, startedAt: number, log: (line: string) => void, deployTo?: WorkerBuild): FaultRunner {
  const fired: Record<string, number> = {};
  const problems: string[] = [];
  const count = (what: string, n = 1) => { fired[what] = (fired[what] ?? 0) + n; };
  const webhookUrl = `${t.proxyUrl}/webhooks/razorpay`;
  const random = seededRandom(plan.seed ^ 0x5bd1e995);
  let flakySuspended = false;
  /** SIGKILLs so far, by worker index. */
  const kills: Record<number, number> = {};
  let opsStopped = false;

  /** A fault in force for a while: switched on, counted, switched off again. */
  const forAWhile = async (at: string, what: string, forMs: number, on: () => Promise<void>, off: () => Promise<void>, note = ''): Promise<void> => {
    log(`fault ${at}: ${what} for ${forMs} ms${note}`);
    await on();
    count(what);
    await sleep(forMs);
    await off();
  };

  const clusterService = (name: 'history' | 'matching' | 'frontend') => {
    if (!t.temporalCluster) throw new Error(`a ${name} fault needs the topology on a Temporal cluster (--cluster)`);
    return t.temporalCluster.services[name];
  };

  const carryOut = async (f: PlannedFault): Promise<void> => {
    await sleep(Math.max(0, startedAt + f.atMs - Date.now()));
    const at = `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
    switch (f.kind) {
      case 'api_faults':
        for (const rule of f.rules) await t.sandbox.injectFault(rule);
        log(`fault ${at}: ${f.rules.length} seeded API fault rules on ${new Set(f.rules.map((r) => r.endpoint)).size} endpoints`);
        return;
      case 'webhook_fault':
        await t.sandbox.injectWebhookFault(f.fault, { count: f.count });
        return;
      case 'webhook_delivery_off':
        return forAWhile(at, 'webhook delivery off', f.forMs, () => t.sandbox.setWebhookDelivery(false), () => t.sandbox.setWebhookDelivery(true));
      case 'webhook_target_down': {
        const dead = `http://127.0.0.1:${await freePort()}/webhooks/razorpay`;
        return forAWhile(at, 'webhook target down', f.forMs, () => t.sandbox.setWebhookTarget(dead), () => t.sandbox.setWebhookTarget(webhookUrl), ' (events given up for good)');
      }
      case 'kill_worker': {
        const worker = t.workers[f.worker]!;
        log(`fault ${at}: SIGKILL ${worker.name} (pid ${worker.pid}), restart after ${f.restartAfterMs} ms`);
        const generation = (kills[f.worker] = (kills[f.worker] ?? 0) + 1);
        await worker.kill('SIGKILL');
        count('worker SIGKILL');
        await sleep(f.restartAfterMs);
        // A restart still starting up when the next planned kill lands dies by design (a slow machine),
        // and so does one the rolling deploy replaced meanwhile (it stops the old build's worker):
        // only the latest kill's restart of the worker still in its place must succeed.
        await worker.restart().catch((err: unknown) => {
          if (kills[f.worker] === generation && t.workers[f.worker] === worker) problems.push(`${worker.name} did not restart: ${String(err)}`);
        });
        return;
      }
      case 'terminate_runs': {
        const query = `WorkflowType = '${PAYOUT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
        // An operator retries a listing that fails for a moment: a cluster whose persistence has
        // just restarted answers "Namespace not found" until its namespace registry reloads.
        const running = await eventually('listing the live payout runs', async () => {
          const ids: string[] = [];
          for await (const wf of temporal.workflow.list({ query })) ids.push(wf.workflowId);
          return ids;
        });
        running.sort();
        const chosen = new Set<string>();
        while (chosen.size < Math.min(f.count, running.length)) chosen.add(running[Math.floor(random() * running.length)]!);
        for (const id of chosen) {
          await temporal.workflow.getHandle(id).terminate('fault campaign: terminated by an operator').then(() => count('payout run terminated'), () => undefined);
        }
        log(`fault ${at}: terminated ${chosen.size} of ${running.length} live payout runs`);
        return;
      }
      case 'restart_temporal':
        log(`fault ${at}: restarting the Temporal server`);
        await t.restartTemporal();
        count('Temporal restart');
        return;
      case 'kill_temporal_service': {
        const service = clusterService(f.service);
        log(`fault ${at}: SIGKILL ${service.name} (pid ${service.pid}), restart after ${f.restartAfterMs} ms`);
        await service.kill('SIGKILL');
        count(`Temporal ${f.service} SIGKILL`);
        await sleep(f.restartAfterMs);
        await service.restart().catch((err: unknown) => { problems.push(`${service.name} did not restart: ${String(err)}`); });
        return;
      }
      case 'restart_temporal_service': {
        const service = clusterService(f.service);
        log(`fault ${at}: restarting ${service.name}`);
        await service.restart().catch((err: unknown) => { problems.push(`${service.name} did not restart: ${String(err)}`); });
        count(`Temporal ${f.service} restart`);
        return;
      }
      case 'restart_postgres':
        log(`fault ${at}: PostgreSQL immediate shutdown and restart`);
        await t.crashAndRestartPostgres();
        count('PostgreSQL immediate shutdown');
        return;
      case 'postgres_failover': {
        log(`fault ${at}: PostgreSQL primary lost; promoting its synchronous replica`);
        const report = await t.failoverPostgres();
        count('PostgreSQL failover');
        log(`fault ${((Date.now() - startedAt) / 1000).toFixed(1)} s: PostgreSQL failed over (${report.unavailableMs} ms without a primary; ${report.withoutStandbyMs} ms more until the new replica is synchronous)`);
        return;
      }
      case 'rolling_deploy': {
        if (!deployTo) throw new Error('a rolling_deploy fault needs the build to deploy (--rolling-deploy)');
        const running = await eventually('listing the live payout runs', async () => {
          let n = 0;
          for await (const _ of temporal.workflow.list({ query: `WorkflowType = '${PAYOUT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` })) n += 1;
          return n;
        });
        log(`fault ${at}: rolling deploy to build ${deployTo.buildId}, one worker at a time (${running} payout runs in flight)`);
        const report = await t.deployWorkers(deployTo);
        count('rolling deploy: worker replaced', report.replaced.length);
        count('rolling deploy: payout runs in flight at its start', running);
        log(`fault ${((Date.now() - startedAt) / 1000).toFixed(1)} s: deployed in ${(report.tookMs / 1000).toFixed(1)} s (current after ${(report.currentAfterMs / 1000).toFixed(1)} s)`);
        return;
      }
      case 'db_rollback': {
        // The clients' writes wait from here (calls.ts), those in flight answered first; then the
        // snapshot. After the lost window the database is restored to it: sessions ended, the rows
        // put back, connections allowed again.
        // First a backlog the lost window will answer: captures of orders placed now wait at the
        // provider, their webhooks undelivered, so the window holds payouts of orders the snapshot knows.
        log(`fault ${at}: webhook delivery held ${f.backlogMs} ms before the database snapshot`);
        await t.sandbox.setWebhookDelivery(false);
        await sleep(f.backlogMs);
        // The hourly pair's open batch closed now: its one transfer leaves about the snapshot, and the
        // backlog's orders join the next batch in the window (issue 36: a restore during an open batch
        // and after its transfer left).
        count('batches closed just before the snapshot', await closeOpenBatches(t, world, [world.vendors.batched]).catch(() => 0));
        let restored!: () => void;
        await holdClientWrites(new Promise<void>((r) => { restored = r; }));
        const transfersBefore = new Set((await eventually('listing the provider\'s transfers', () => t.sandbox.transfers())).map((x) => x.id));
        const snap = await eventually('snapshotting the app database', () => snapshotDatabase(t.databaseUrl, `campaign_${plan.seed}`)).catch((err: unknown) => { restored(); throw err; });
        const snapAt = `${((Date.now() - startedAt) / 1000).toFixed(1)} s`;
        log(`fault ${snapAt}: database snapshot taken, webhook delivery on; restored to it in ${(f.lostMs / 1000).toFixed(1)} s`);
        try {
          await t.sandbox.setWebhookDelivery(true);
          await sleep(f.lostMs);
          // What the provider did that the restore makes our rows forget: the proof the fault bit.
          const lost = (await eventually('listing the provider\'s transfers', () => t.sandbox.transfers())).filter((x) => !transfersBefore.has(x.id));
          await eventually('restoring the app database', () => restoreDatabase(t.databaseUrl, snap, { exclusive: true }));
          count(`database restored (${Math.round(f.lostMs / 1000)} s lost)`);
          count('transfers made in the lost window', lost.length);
          count('batch transfers made in the lost window', lost.filter((x) => x.notes && !Array.isArray(x.notes) && typeof x.notes.batch_id === 'string').length);
          log(`fault ${((Date.now() - startedAt) / 1000).toFixed(1)} s: database restored to the snapshot of ${snapAt}`);
        } finally {
          restored();
        }
        return;
      }
      case 'kill_switch':
        return forAWhile(at, 'kill switch paused', f.forMs,
          async () => { await callRetrying(t, 'ops', 'POST', '/ops/transfers/pause', { reason: 'fault campaign: paused' }); },
          async () => { await callRetrying(t, 'ops', 'POST', '/ops/transfers/resume', { reason: 'fault campaign: resumed' }); });
      case 'kill_switch_flutter': {
        // Pause, resume, pause… a few hundred ms apart while claims are being made: a payout that
        // found the switch paused must hear the resume that follows (runs count resumes).
        log(`fault ${at}: kill switch flutters (${f.gapsMs.length} flips)`);
        for (const [i, gap] of f.gapsMs.entries()) {
          const pause = i % 2 === 0;
          await callRetrying(t, 'ops', 'POST', pause ? '/ops/transfers/pause' : '/ops/transfers/resume', { reason: `fault campaign: flutter ${i + 1}` });
          count(pause ? 'kill switch flutter pause' : 'kill switch flutter resume');
          await sleep(gap);
        }
        return;
      }
      case 'balance_zero':
        return forAWhile(at, 'platform balance zero', f.forMs, () => t.sandbox.setPlatformBalance(0), () => t.sandbox.setPlatformBalance(PLATFORM_BALANCE_PAISE));
      case 'suspend_account': {
        const account = world.accounts[f.vendor]!;
        return forAWhile(at, 'linked account suspended', f.forMs,
          async () => { flakySuspended = true; await t.sandbox.setLinkedAccountStatus(account, 'suspended'); },
          async () => { await t.sandbox.setLinkedAccountStatus(account, 'activated'); flakySuspended = false; },
          ` (${world.vendors[f.vendor]})`);
      }
    }
  };

  // Ops: payouts of the vendor whose account was suspended park; once it is active again, ops
  // retries them through the API, as the queue's next step says. Nothing else is decided for the system.
  const opsLoop = (async () => {
    while (!opsStopped) {
      await sleep(1_500);
      if (flakySuspended) continue;
      try {
        const { body } = await callRetrying(t, 'ops', 'GET', `/ops/payouts?status=parked&vendorId=${world.vendors.flaky}&limit=200`, undefined, { deadlineMs: 10_000 });
        for (const item of body.items as Array<{ orderId: string }>) {
          await callRetrying(t, 'ops', 'POST', `/ops/payouts/${item.orderId}/retry`, { reason: 'fault campaign: the account is active again' }, { accept: [409], deadlineMs: 10_000 });
          count('ops retry (API)');
        }
      } catch { /* the API is restarting: next round */ }
    }
  })();

  const done = Promise.all(plan.faults.map((f) => carryOut(f).catch((err: unknown) => {
    problems.push(`fault ${f.kind} at ${f.atMs} ms: ${err instanceof Error ? err.message : String(err)}`);
  }))).then(() => undefined);

  return {
    fired, problems, done,
    async clearAll() {
      await eventually('clearing the sandbox faults', async () => {
        await t.sandbox.clearFaults();
        await t.sandbox.setWebhookDelivery(true);
        await t.sandbox.setWebhookTarget(webhookUrl);
        await t.sandbox.setPlatformBalance(PLATFORM_BALANCE_PAISE);
        await t.sandbox.setLinkedAccountStatus(world.accounts.flaky!, 'activated');
      });
      flakySuspended = false;
      const state = await callRetrying(t, 'ops', 'GET', '/ops/transfers/switch');
      if (state.body.paused) await callRetrying(t, 'ops', 'POST', '/ops/transfers/resume', { reason: 'fault campaign: quiesce' });
      for (const w of t.workers) if (!w.running) await w.restart();
    },
    stopOps() {
      opsStopped = true;
      return opsLoop;
    },
  };
}
