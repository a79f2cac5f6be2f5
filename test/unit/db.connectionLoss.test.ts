/** A lost PostgreSQL connection is logged as one line: node-postgres attaches the whole client to
 * the error it emits (err.client, hundreds of fields), which pino's serializer used to dump. */
import { connectionLoss } from '../../src/db/pool';

describe('connectionLoss', () => {
  test('when the server shuts down under a client, then the log fields are its SQLSTATE and message only', () => {
    const err = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01', severity: 'FATAL', client: { connectionParameters: { host: '127.0.0.1', password: 'secret' }, queryQueue: new Array(50).fill({}) },
    });
    const fields = connectionLoss(err);
    expect(fields).toEqual({ code: '57P01', reason: 'terminating connection due to administrator command' });
    expect(JSON.stringify(fields)).not.toContain('secret');
  });

  test('when the connection just ends (no SQLSTATE), then the code is null and the message stays', () => {
    expect(connectionLoss(new Error('Connection terminated unexpectedly'))).toEqual({ code: null, reason: 'Connection terminated unexpectedly' });
    expect(connectionLoss('boom')).toEqual({ code: null, reason: 'boom' });
  });
});
