import { ConfigError, loadConfig } from '../../src/config/config';

const PRETTY_IN_PRODUCTION = 'LOG_FORMAT=pretty is for development: pino-pretty is a dev dependency and is not installed in production images; use LOG_FORMAT=json';

function problemsOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return '';
}

/** Loads src/logger.ts afresh under `env`, with pino-pretty replaced by a spy; answers whether the
 * logger asked for it. */
function loggerLoadsPinoPretty(env: Record<string, string>): boolean {
  const saved = { NODE_ENV: process.env.NODE_ENV, LOG_FORMAT: process.env.LOG_FORMAT };
  const pretty = jest.fn(() => ({ write: () => undefined }));
  try {
    Object.assign(process.env, env);
    jest.isolateModules(() => {
      jest.doMock('pino-pretty', () => pretty);
      // The logger decides at load time, so it is loaded afresh here, after the environment is set.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('../../src/logger');
    });
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    jest.dontMock('pino-pretty');
  }
  return pretty.mock.calls.length > 0;
}

describe('config: LOG_FORMAT', () => {
  test('when NODE_ENV=production and LOG_FORMAT=pretty, then start-up fails with one line saying why', () => {
    expect(problemsOf({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' })).toBe(`Invalid configuration:\n  - ${PRETTY_IN_PRODUCTION}`);
  });

  test('when other values are bad too, then the same error lists LOG_FORMAT beside them', () => {
    const message = problemsOf({ NODE_ENV: 'production', LOG_FORMAT: 'pretty', API_PORT: 'eighty' });
    expect(message).toContain('API_PORT');
    expect(message).toContain(PRETTY_IN_PRODUCTION);
  });

  test('when pretty is asked for outside production, or json in production, then it is accepted', () => {
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('pretty');
    expect(loadConfig({ NODE_ENV: 'production', LOG_FORMAT: 'json' }).LOG_FORMAT).toBe('json');
    expect(loadConfig({}).LOG_FORMAT).toBe('json');
  });

  test('when LOG_FORMAT is neither json nor pretty, then it is refused', () => {
    expect(problemsOf({ LOG_FORMAT: 'plain' })).toContain('LOG_FORMAT');
  });

  test('when NODE_ENV=production and LOG_FORMAT=pretty, then the logger never loads pino-pretty', () => {
    expect(loggerLoadsPinoPretty({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' })).toBe(false);
    expect(loggerLoadsPinoPretty({ NODE_ENV: 'development', LOG_FORMAT: 'pretty' })).toBe(true);
  });
});
