/** What `npm run dev` prints for the console: its URL and how to sign in (with the dev keys the
 * stack prints beside it, one per role). */
export function consoleDevLines(input: { apiUrl: string }): string[] {
  const url = `${input.apiUrl.replace(/\/$/, '')}/console`;
  return [`  Console           ${url}  (sign in with a dev key: finance → recon, exceptions, bank statements, vendor statements, settlement runs, bank details; ops → payout queue, batches, webhook quarantine; admin → bank details)`];
}
