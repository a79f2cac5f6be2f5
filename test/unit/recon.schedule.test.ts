import { reconWorkflowId } from '../../src/contracts/recon';
import { reconWindowSchema } from '../../src/contracts/reconWindow';
import { istHourToUtc, reconScheduleOptions } from '../../src/recon/temporal';
import { scheduledWindow } from '../../src/workflows/recon';
import { loadConfig } from '../../src/config/config';

describe('recon schedule and window', () => {
  test('when the schedule fires at 07:00 IST, then it fires at 01:30 UTC and covers the three previous IST days', () => {
    expect(istHourToUtc(7)).toEqual({ hour: 1, minute: 30 });
    expect(istHourToUtc(3)).toEqual({ hour: 21, minute: 30 });
    // 2026-11-17 01:30 UTC = 07:00 IST Tuesday
    expect(scheduledWindow(new Date('2026-11-17T01:30:00Z'), 3)).toEqual({ from: '2026-11-14', to: '2026-11-16' });
    // 20:00 UTC on the 16th is already the 17th in IST
    expect(scheduledWindow(new Date('2026-11-16T20:00:00Z'), 1)).toEqual({ from: '2026-11-16', to: '2026-11-16' });
  });

  test('when the schedule options are built, then overlap is skipped and a missed day catches up once', () => {
    const options = reconScheduleOptions(loadConfig({}));
    expect(options.spec.calendars).toMatchObject([{ hour: 1, minute: 30 }]);
    expect(options.policies).toEqual({ overlap: 'SKIP', catchupWindow: '1 day' });
    expect(options.action).toMatchObject({ workflowType: 'scheduledReconWorkflow', args: [{ lookbackDays: 3 }] });
  });

  test('when a window is given, then its id is recon-<from>-<to> and bad windows are refused', () => {
    expect(reconWorkflowId({ from: '2026-11-14', to: '2026-11-16' })).toBe('recon-2026-11-14-2026-11-16');
    expect(reconWindowSchema.safeParse({ from: '2026-11-16', to: '2026-11-14' }).success).toBe(false);
    expect(reconWindowSchema.safeParse({ from: '2026-01-01', to: '2026-03-01' }).success).toBe(false);
    expect(reconWindowSchema.safeParse({ from: '2026-11-14', to: '2026-11-16', asOf: '17-11-2026' }).success).toBe(false);
  });

  test('when BANK_HOLIDAYS lists dates, then config parses them; a bad date stops start-up', () => {
    expect(loadConfig({ BANK_HOLIDAYS: '2026-11-16, 2026-12-25' }).BANK_HOLIDAYS).toEqual(['2026-11-16', '2026-12-25']);
    expect(loadConfig({}).BANK_HOLIDAYS).toEqual([]);
    expect(() => loadConfig({ BANK_HOLIDAYS: '16/11/2026' })).toThrow(/BANK_HOLIDAYS/);
  });
});
