/** The operator's step of a rolling deploy with Worker Versioning (docs/production.md, "Deploying a
 * workflow change"): make a build the current version of the worker deployment, so that every new
 * task of its queues (and, AUTO_UPGRADE, every running workflow's next task) goes to that build's
 * workers and none to the old build's. What `temporal worker deployment set-current-version` does;
 * here for the topology and the campaign, which deploy without a terminal. */
import type { Client } from '@temporalio/client';

/** gRPC status codes (the SDK's errors carry them as numbers). */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;
const UNAVAILABLE = 14;

export interface DeploymentVersionRef {
  namespace: string;
  deploymentName: string;
  buildId: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A version is known once one of its workers has polled every queue; until then the server answers
 * NOT_FOUND or FAILED_PRECONDITION, which is waited out (up to `timeoutMs`). */
export async function setCurrentVersion(client: Client, ref: DeploymentVersionRef, opts: { timeoutMs?: number; identity?: string } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: ref.namespace, deploymentName: ref.deploymentName, buildId: ref.buildId, identity: opts.identity ?? 'payouts-deploy',
      });
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      const waitable = code === NOT_FOUND || code === FAILED_PRECONDITION || code === UNAVAILABLE;
      if (!waitable || Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

/** The deployment's current build, or null (none set: tasks go to unversioned workers). */
export async function currentBuildId(client: Client, ref: Omit<DeploymentVersionRef, 'buildId'>): Promise<string | null> {
  const res = await client.workflowService.describeWorkerDeployment({ namespace: ref.namespace, deploymentName: ref.deploymentName });
  return res.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? null;
}
