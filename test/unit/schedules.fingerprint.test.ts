import { loadConfig } from '../../src/config/config';
import { payoutSweepScheduleOptions } from '../../src/payouts/sweepSchedule';
import { scheduleFingerprint } from '../../src/temporal/schedules';

describe('schedule fingerprints', () => {
  const config = loadConfig({});
  test('when config is the same, then the fingerprint is the same (a restart changes nothing)', () => {
    expect(scheduleFingerprint(payoutSweepScheduleOptions(config))).toBe(scheduleFingerprint(payoutSweepScheduleOptions(loadConfig({}))));
  });
  test('when the cadence or the task queue changes, then the fingerprint changes (the worker updates the Schedule)', () => {
    const base = scheduleFingerprint(payoutSweepScheduleOptions(config));
    expect(scheduleFingerprint(payoutSweepScheduleOptions({ ...config, PAYOUT_SWEEP_EVERY_MS: 60_000 }))).not.toBe(base);
    expect(scheduleFingerprint(payoutSweepScheduleOptions({ ...config, TEMPORAL_TASK_QUEUE: 'other' }))).not.toBe(base);
  });
});
