/** A worker booting while a cluster reloads its namespaces waits instead of exiting (issue 23's
 * --cluster campaign: worker-2's restart died on "Namespace not found: 'default'"). */
import { NamespaceNotFoundError } from '@temporalio/client';
import { isTransientServerError, whileServerSettles } from '../../src/temporal/whileServerSettles';

function clock() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => { t += ms; } };
}

test('"Namespace not found" and UNAVAILABLE are waited out; the step then answers', async () => {
  const answers: unknown[] = [new NamespaceNotFoundError('default'), Object.assign(new Error('14 UNAVAILABLE'), { code: 14 }), 'ensured'];
  let calls = 0;
  const retried: unknown[] = [];
  const result = await whileServerSettles(async () => {
    const a = answers[calls++];
    if (a instanceof Error) throw a;
    return a;
  }, { ...clock(), onRetry: (e) => retried.push(e) });
  expect(result).toBe('ensured');
  expect(calls).toBe(3);
  expect(retried).toHaveLength(2);
});

test('any other error is thrown at once', async () => {
  let calls = 0;
  const invalid = Object.assign(new Error('3 INVALID_ARGUMENT'), { code: 3 });
  await expect(whileServerSettles(async () => { calls++; throw invalid; }, clock())).rejects.toBe(invalid);
  expect(calls).toBe(1);
  expect(isTransientServerError(invalid)).toBe(false);
});

test('past the deadline the transient error is thrown', async () => {
  const c = clock();
  let calls = 0;
  await expect(whileServerSettles(async () => { calls++; throw new NamespaceNotFoundError('default'); }, { ...c, deadlineMs: 5_000, pauseMs: 1_000 })).rejects.toBeInstanceOf(NamespaceNotFoundError);
  expect(calls).toBe(6);
});
