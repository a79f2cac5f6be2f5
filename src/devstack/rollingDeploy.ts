/** A rolling deploy of the topology's workers to another build (issue 23, item 5), the procedure
 * docs/production.md gives an operator: one worker at a time, the new build's worker is started
 * and ready before the old one is stopped (SIGTERM: it finishes what it holds); once the first new
 * worker polls, its build is made the deployment's current version, from which moment no task goes
 * to an old worker. The workers array is updated in place, so faults and checks that follow see
 * the new processes. */
import type { DeployReport, TopologyWorker, WorkerBuild } from './topologyTypes';

export type { DeployReport, WorkerBuild };

export async function rollWorkers(o: {
  workers: TopologyWorker[];
  build: WorkerBuild;
  /** A worker of `build` in the place of workers[index] (not started). */
  replacement: (index: number, build: WorkerBuild) => Promise<TopologyWorker>;
  makeCurrent: (buildId: string) => Promise<void>;
  log: (line: string) => void;
}): Promise<DeployReport> {
  const started = Date.now();
  let currentAfterMs = -1;
  const replaced: DeployReport['replaced'] = [];
  for (let i = 0; i < o.workers.length; i++) {
    const old = o.workers[i]!;
    const next = await o.replacement(i, o.build);
    await next.start();
    if (currentAfterMs < 0) {
      await o.makeCurrent(o.build.buildId);
      currentAfterMs = Date.now() - started;
      o.log(`deploy: build ${o.build.buildId} is current (its first worker ${next.name}, pid ${next.pid}, polls); old workers get no more tasks`);
    }
    const oldPid = old.pid;
    await old.stop();
    o.workers[i] = next;
    replaced.push({ worker: old.name, oldPid, newPid: next.pid });
    o.log(`deploy: ${old.name} (pid ${oldPid}) replaced by pid ${next.pid} of build ${o.build.buildId}`);
  }
  return { buildId: o.build.buildId, replaced, currentAfterMs, tookMs: Date.now() - started };
}
