/** A payout history the Temporal SDK (1.24.0, the newest) cannot replay, recorded from a real run under
 * parallel tests (test/fixtures/sdk-bug-histories). Its first local activity (startPayoutRun) finished
 * as the first workflow task completed: the server recorded its marker in that task and a second task
 * ran the code after it, which called patched('payout-provider-budget'). On replay the SDK (as we read it) hands the
 * local activity's result back inside the first task, where that patch's marker is not yet known, so
 * patched() answers false and the next task's marker meets no command: "[TMPRL1100] Nondeterminism
 * error: Non-deprecated patch marker encountered for change payout-provider-budget, but there is no
 * corresponding change command". The workflow code is the same in both; the replay differs. A run
 * whose cache entry is evicted (a worker restart) would fail its tasks the same way until an SDK fix.
 * This test fails once the SDK replays it: then move the history to test/fixtures/histories. */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { replayOptions } from '../../src/worker';

const FILE = path.resolve(__dirname, '../fixtures/sdk-bug-histories/payout-local-activity-at-task-boundary.json');

test('when a payout history whose first local activity finished as its first task completed is replayed, then the SDK still reports the patch marker nondeterminism (an SDK bug: see the header)', async () => {
  const history = temporal.api.history.v1.History.fromObject(JSON.parse(fs.readFileSync(FILE, 'utf8')));
  const errors: string[] = [];
  for await (const result of Worker.runReplayHistories(await replayOptions({ traced: false }), [{ workflowId: 'payout-local-activity-at-task-boundary', history }])) {
    if (result.error) errors.push(result.error.message);
  }
  expect(errors).toEqual([expect.stringContaining('Non-deprecated patch marker encountered for change payout-provider-budget')]);
}, 120_000);
