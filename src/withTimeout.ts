/** `promise`, or a rejection after `ms` ("no answer within …", prefixed with `what` when given). The
 * timer is cleared either way. Used where a call must not hold its caller for ever (the outbox's
 * workflow starts; the tests' waits for a run). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what ? `${what}: ` : ''}no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
