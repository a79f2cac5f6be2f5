/** Finance CLI for reconciliation:
 *   npm run recon -- run <from> <to> [--as-of YYYY-MM-DD]   start (or join) the run for an IST window
 *   npm run recon -- import-bank <file.csv>                  import a bank statement (all or nothing)
 *   npm run recon -- exceptions [--status open] [--class c] [--reason r] [--from d] [--to d]
 *   npm run recon -- ensure-schedule                         create/update the daily Schedule */
import fs from 'node:fs/promises';
import path from 'node:path';
import { ZodError } from 'zod';
import { loadConfig } from '../config/config';
import { reconWindowSchema } from '../contracts/reconWindow';
import { createPool } from '../db/pool';
import { logger } from '../logger';
import { importBankStatement } from '../recon/bankStatementImport';
import { exceptionFilterSchema, listExceptions } from '../recon/exceptions';
import { ensureReconSchedule, temporalReconStarter } from '../recon/temporal';
import { connectClient } from '../temporal/connection';

function flags(args: string[]): { positional: string[]; options: Record<string, string> } {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--')) options[arg.slice(2)] = args[++i] ?? '';
    else positional.push(arg);
  }
  return { positional, options };
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig();
  const [command, ...rest] = argv;
  const { positional, options } = flags(rest);
  if (command === 'run' || command === 'ensure-schedule') {
    // Refuse a bad window (e.g. 2026-02-30) before connecting anywhere.
    const window = command === 'run' ? reconWindowSchema.parse({ from: positional[0], to: positional[1], asOf: options['as-of'] }) : null;
    const client = await connectClient(config);
    try {
      if (!window) {
        console.log(`recon schedule ${await ensureReconSchedule(client, config)}`);
        return 0;
      }
      const started = await temporalReconStarter(client, config.TEMPORAL_TASK_QUEUE).start(window);
      console.log(JSON.stringify(started));
      return 0;
    } finally {
      await client.connection.close();
    }
  }
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required');
  const db = createPool(config.DATABASE_URL, 2);
  try {
    if (command === 'import-bank' && positional[0]) {
      const text = await fs.readFile(positional[0], 'utf8');
      const result = await importBankStatement(db, { text, fileName: path.basename(positional[0]), actor: `cli:${process.env.USER ?? 'unknown'}` });
      console.log(JSON.stringify(result, null, 2));
      return result.ok ? 0 : 2;
    }
    if (command === 'exceptions') {
      const rows = await listExceptions(db, exceptionFilterSchema.parse(options));
      for (const e of rows) console.log([e.id, e.day, e.status, e.class, e.severity, e.reason, e.entityId ?? e.settlementId ?? e.bankLineId, e.expectedPaise, e.actualPaise, e.nextAction].join('\t'));
      return 0;
    }
  } finally {
    await db.end();
  }
  console.error('usage: recon run <from> <to> [--as-of D] | import-bank <file> | exceptions [--status s --class c --reason r --from d --to d] | ensure-schedule');
  return 64;
}

main(process.argv.slice(2)).then((code) => process.exit(code)).catch((err) => {
  // Bad arguments (e.g. 2026-02-30): say which and what is wrong, no stack trace.
  if (err instanceof ZodError) {
    for (const issue of err.issues) process.stderr.write(`invalid ${issue.path.join('.') || 'input'}: ${issue.message}\n`);
    process.exit(2);
  }
  logger.fatal({ err }, 'recon CLI failed');
  process.exit(1);
});
