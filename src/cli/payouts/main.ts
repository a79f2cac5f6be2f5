/** `payouts`: the ops and finance CLI. It talks to the API with an API key, never to the database,
 * and finds a local stack by itself (.data/stack.json, written by `npm run dev`).
 *   payouts queue | show | retry | mark-paid | pay-offline | cancel | pause | resume | switch | audit   (ops)
 *   payouts recon run | exceptions | resolve, payouts bank import                                      (finance)
 *   payouts settlement run | show | bank-file | paid | failed | import | cancel                         (finance)
 *   payouts statement VENDOR --from --to                                                           (finance, or the vendor's key)
 * Exit codes: 0 ok; 1 failed (the API refused or failed, a run failed, some decisions not applied);
 * 2 bad input (usage, flags, a file that cannot be read or that the API rejects as malformed). */
import { ApiError, ApiUnreachable, UnexpectedAnswer } from './apiClient';
import { registerBankCommands } from './bank';
import { Failure, UsageError } from './context';
import { registerOpsCommands } from './ops';
import { registerReconCommands } from './recon';
import { registerSettlementCommands } from './settlement';
import { registerStatementCommands } from './statement';

/** API answers that say the input was wrong (400 validation), not that the call failed. */
const BAD_INPUT_CODES = new Set(['invalid_request', 'invalid_bank_statement', 'invalid_bank_response', 'malformed_json']);

export async function main(argv: string[]): Promise<number> {
  // commander 15 is ESM-only; this CommonJS module loads it with import().
  const { Command, CommanderError } = await import('commander');
  const program = new Command('payouts')
    .description('Payouts for ops and finance, through the API')
    .option('--api-url <url>', 'the API (default: $PAYOUTS_API_URL, else the local stack in .data/stack.json)')
    .option('--key <key>', 'an API key with the role the command needs (default: $PAYOUTS_API_KEY, else the stack\'s dev key)')
    .option('--actor <name>', 'the person acting, beside the key in audit rows (default: $USER)')
    .option('--json', 'print the API\'s answer as JSON')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', [
      '',
      'The API and key: --api-url/--key, else $PAYOUTS_API_URL/$PAYOUTS_API_KEY, else the stack that npm run dev',
      'started (.data/stack.json; ops commands use its ops key, recon, bank and statement its finance key).',
      'Exit codes: 0 ok, 1 failed (API error, run failed, a decision not applied), 2 bad input.',
      '',
      'Examples:',
      '  payouts queue --status parked --older-than 1h',
      '  payouts retry ord_123 ord_456 --reason "vendor account reactivated"',
      '  payouts recon run --from 2026-09-01 --to 2026-09-07 --wait',
      '  payouts recon exceptions --status open --format csv > exceptions.csv',
      '  payouts statement ven_dosa --from 2026-09-01 --to 2026-09-30 --format csv > statement.csv',
    ].join('\n'));
  registerOpsCommands(program);
  registerReconCommands(program);
  registerBankCommands(program);
  registerSettlementCommands(program);
  registerStatementCommands(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // commander has printed its own message; --help and --version end with 0.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    return reportFailure(err);
  }
}

function reportFailure(err: unknown): number {
  const [message, code] = describeFailure(err);
  process.stderr.write(`error: ${message}\n`);
  if (code === 1 && process.env.PAYOUTS_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return code;
}

function describeFailure(err: unknown): [message: string, exitCode: 1 | 2] {
  if (err instanceof UsageError) return [err.message, 2];
  if (err instanceof Failure) return [err.message, 1];
  if (err instanceof ApiError) return [err.oneLine(), err.status === 400 && BAD_INPUT_CODES.has(err.code) ? 2 : 1];
  if (err instanceof ApiUnreachable || err instanceof UnexpectedAnswer) return [err.message, 1];
  return [`unexpected: ${err instanceof Error ? err.message : String(err)}`, 1];
}

/** The process around main: the exit code once stdout is flushed (a pipe may still hold the last
 * lines), and a pipe closed early (`payouts queue | head`) is not an error. */
export function run(argv = process.argv.slice(2)): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? process.exit(0) : undefined));
  const exit = (code: number) => process.stdout.write('', () => process.exit(code));
  main(argv).then(exit, (err: unknown) => exit(reportFailure(err)));
}

if (require.main === module) run();
