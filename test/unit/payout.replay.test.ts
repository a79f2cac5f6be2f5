/** Replays payout and sweep histories recorded from the integration tests (test/fixtures/histories,
 * written when PAYOUT_RECORD_HISTORIES=1, in @temporalio/proto's object form) against today's workflow code: a change that would break
 * a running payout fails here as a nondeterminism error. No server needed. */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { replayOptions } from '../../src/worker';

const DIR = path.resolve(__dirname, '../fixtures/histories');
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

describe('payout workflow replay', () => {
  test('when histories are recorded, then at least a few of them are kept as fixtures', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  // A worker traces or not by its configuration (TRACES_OTLP_URL): every history replays either way.
  test.each([['untraced', false], ['traced (the OpenTelemetry interceptors in the bundle)', true]])('when every recorded history is replayed with Worker.runReplayHistories by a %s worker, then none is nondeterministic', async (_how, traced) => {
    const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: temporal.api.history.v1.History.fromObject(JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8'))) }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(await replayOptions({ traced }), histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name} ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  }, 120_000);
});
