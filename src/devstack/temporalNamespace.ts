import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './temporal';

/** The operator's one-time Temporal setup: the namespace (registered unless it exists) and the
 * Keyword search attributes the payout workflow upserts. A namespace just registered reaches the
 * server's services one at a time (their namespace caches refresh every few seconds), so each step
 * is retried until it answers and the attributes are listed. */
export async function ensureNamespace(address: string, namespace: string, timeoutMs = 60_000): Promise<void> {
  const connection = await Connection.connect({ address });
  const deadline = Date.now() + timeoutMs;
  const retrying = async <T>(what: string, step: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`Temporal namespace ${namespace}: ${what} still failing after ${timeoutMs} ms: ${(err as Error).message}`, { cause: err });
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  try {
    // A cluster's frontend that has just started answers "not healthy yet" for a moment.
    await retrying('registering the namespace', async () => {
      const exists = await connection.workflowService.describeNamespace({ namespace }).then(() => true, (err: { code?: number }) => {
        if (err.code === 5) return false; // NOT_FOUND
        throw err;
      });
      if (exists) return;
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') }).catch((err: { code?: number }) => {
        if (err.code !== 6) throw err; // ALREADY_EXISTS: registered by someone else meanwhile
      });
    });
    const KEYWORD = proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await retrying('registering search attributes', async () => {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const missing = SEARCH_ATTRIBUTES.filter((name) => !(customAttributes && name in customAttributes));
      if (missing.length === 0) return;
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])) });
      throw new Error(`added ${missing.join(', ')}; checking they are listed`);
    });
    // The frontend knows the namespace for workflow and Schedule calls too.
    await retrying('listing Schedules', () => connection.workflowService.listSchedules({ namespace, maximumPageSize: 1 }));
  } finally {
    await connection.close();
  }
}
