import { logger } from '../../src/logger';
import { sdkLogFunction } from '../../src/temporal/runtime';

describe('the Temporal SDK\'s log lines, as ours', () => {
  afterEach(() => jest.restoreAllMocks());

  const entry = (level: 'WARN' | 'ERROR', message: string) => ({ level, message, timestampNanos: 0n, meta: { sdkComponent: 'worker', taskQueue: 'payouts-razorpay-reads' } });

  test('when an activity-only worker says it polls no workflow tasks, then the line is a debug line (the design, not a problem)', () => {
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const debug = jest.spyOn(logger, 'debug').mockImplementation(() => undefined);
    sdkLogFunction(entry('WARN', 'No workflows registered, not polling for workflow tasks'));
    expect(warn).not.toHaveBeenCalled();
    expect(debug).toHaveBeenCalledWith({ sdkComponent: 'worker', taskQueue: 'payouts-razorpay-reads', source: 'temporal-sdk' }, 'No workflows registered, not polling for workflow tasks');
  });

  test('when the SDK warns or errs about anything else, then it is logged at its level through the app\'s structured logger with its fields', () => {
    const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    sdkLogFunction(entry('WARN', 'Failed to poll for task'));
    sdkLogFunction(entry('ERROR', 'Worker failed'));
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ source: 'temporal-sdk', sdkComponent: 'worker' }), 'Failed to poll for task');
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ source: 'temporal-sdk' }), 'Worker failed');
  });
});
