/** A connection the server drops while a transaction holds it (PostgreSQL restarting, an immediate
 * shutdown, a terminated backend) fails that transaction and nothing else: found by the fault
 * campaign, where an API process died of it (node-postgres emits 'error' on a checked-out client,
 * which has no listener of the pool's, and Node makes an unhandled 'error' fatal). */
import { createPool, inTransaction } from '../../src/db/pool';
import { isolatedPoolForSuite } from '../support/db';

describe('PostgreSQL connections lost while in use', () => {
  const suite = isolatedPoolForSuite();

  test('when the server ends a connection between two statements of a transaction, then that transaction fails, the process lives on and the pool serves the next query', async () => {
    const { db: admin, url } = suite;
    const db = createPool(url, 2);
    const errors: unknown[] = [];
    const onUncaught = (err: unknown) => errors.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const doomed = inTransaction(db, async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // The server's FATAL and the close arrive while no query is in flight: the client's 'error' event.
        await new Promise((r) => setTimeout(r, 500));
        await tx.query('SELECT 1');
      });
      await expect(doomed).rejects.toThrow();
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(errors).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await db.end();
    }
  });
});
