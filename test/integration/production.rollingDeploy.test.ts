/** Issue 23, item 5: a rolling deploy of a workflow change while payouts are in flight. The
 * production topology's workers start as the previous build (this commit without its
 * up-front patch, `payout-patches-up-front`: test/campaign/deploy/previous-build.patch, a git worktree), with
 * Worker Versioning; payouts start on it and wait for their transfers to settle; the workers are
 * replaced one at a time by this build, which is made current once its first worker polls. The
 * runs started on the old build finish on the new one (it replays them through the old branch),
 * each vendor is paid once, and no worker logs a nondeterminism error. */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { payoutWorkflowId } from '../../src/contracts/payout';
import { startTopology } from '../../src/devstack/topology';
import { placeOrder, seedPair, topUpEmployer, waitForPayout, callApiOk } from '../../src/devstack/topologyScenario';
import type { Topology } from '../../src/devstack/topologyTypes';
import { currentBuildId } from '../../src/temporal/workerDeployment';
import { SCHEDULE_IDS } from '../../src/wiring';
import { nondeterminismErrors, prepareDeployBuilds, type DeployBuilds } from '../campaign/deploy';
import { testServices } from '../support/db';

const VENDOR_NET = 8_100; // ₹100, 99% subsidised, 19% commission

describe('a rolling deploy of a workflow change with payouts in flight (Worker Versioning)', () => {
  let topology: Topology;
  let client: Client;
  let builds: DeployBuilds;
  const tag = randomBytes(3).toString('hex');
  const employerId = `emp_deploy_${tag}`;

  beforeAll(async () => {
    const services = testServices();
    builds = await prepareDeployBuilds(process.cwd(), () => undefined);
    topology = await startTopology({
      temporalAddress: process.env.TEMPORAL_ADDRESS ?? services.temporalAddress,
      namespace: `deploy-${tag}`,
      databaseUrl: services.adminDatabaseUrl,
      workerBuild: builds.previous,
      // Transfers stay pending until the test processes them: the runs wait across the deploy.
      sandboxTransferDelayMs: 600_000,
      readyTimeoutMs: 150_000,
    });
    client = new Client({ connection: await Connection.connect({ address: topology.temporalAddress }), namespace: topology.namespace });
    await callApiOk(topology, 'admin', 'POST', '/v1/admin/employers', { id: employerId, name: `Deploy employer ${tag}` });
    await topUpEmployer(topology, employerId, 100_000);
  }, 200_000);

  afterAll(async () => {
    if (client) for (const id of SCHEDULE_IDS) await client.schedule.getHandle(id).delete().catch(() => undefined);
    await client?.connection.close();
    await topology?.stop();
    await builds?.remove();
  }, 60_000);

  test('when the workers are rolled to the new build while payouts wait for settlement, then those runs finish on the new build, each vendor is paid once, and no nondeterminism error is logged', async () => {
    const deployment = { namespace: topology.namespace, deploymentName: topology.workerDeployment! };
    expect(await currentBuildId(client, deployment)).toBe(builds.previous.buildId);
    const orders: Array<{ orderId: string; account: string }> = [];
    for (let i = 0; i < 3; i += 1) {
      const account = await topology.sandbox.createLinkedAccount();
      const vendorId = `ven_deploy_${tag}_${i}`;
      await seedPair(topology, { employerId, vendorId, linkedAccountId: account, commissionBps: 1_900 });
      const { order, checkout } = await placeOrder(topology, { clientReference: `deploy-${tag}-${i}`, employerId, vendorId, totalPaise: 10_000, subsidyPaise: 9_900 });
      await topology.sandbox.payOrder(checkout!.orderId);
      orders.push({ orderId: order.orderId, account });
    }
    // Started and sent on the previous build; waiting for their transfers to settle.
    for (const o of orders) await waitForPayout(topology, o.orderId, ['accepted', 'processing'], 60_000);
    const before = await Promise.all(orders.map((o) => client.workflow.getHandle(payoutWorkflowId(o.orderId)).describe()));
    expect(before.map((d) => d.status.name)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    const oldPids = topology.workers.map((w) => w.pid);

    const report = await topology.deployWorkers(builds.current);
    expect(report.replaced.map((r) => r.oldPid)).toEqual(oldPids);
    expect(topology.workers.map((w) => w.pid)).toEqual(report.replaced.map((r) => r.newPid));
    expect(await currentBuildId(client, deployment)).toBe(builds.current.buildId);

    await topology.sandbox.processPendingTransfers();
    for (const o of orders) await waitForPayout(topology, o.orderId, ['settled'], 60_000);
    for (const o of orders) {
      const transfers = await topology.sandbox.transfers({ recipient: o.account });
      expect(transfers).toHaveLength(1);
      expect(transfers[0]).toMatchObject({ amount: VENDOR_NET, status: 'processed', notes: { order_id: o.orderId } });
      // The row settles in the run's last activity; the run completes on its next task.
      await client.workflow.getHandle(payoutWorkflowId(o.orderId)).result();
      const done = await client.workflow.getHandle(payoutWorkflowId(o.orderId)).describe();
      expect(done.status.name).toBe('COMPLETED');
      // Its last task ran on the new build.
      expect(done.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe(builds.current.buildId);
    }
    expect(await nondeterminismErrors(topology.stateDir)).toEqual([]);
  }, 240_000);
});
