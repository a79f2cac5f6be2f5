/** Finance commands for bank statements (role `finance`): import a statement file, all or nothing. */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import { ApiError, bankProblemsSchema, type BankImport } from './apiClient';
import { connect, UsageError } from './context';
import { writeJson, writeLines } from './output';

export function registerBankCommands(program: Command): void {
  const bank = program.command('bank').description('bank statements (finance)');

  bank.command('import')
    .description('import a bank statement CSV (utr,amount,value_date,narration): all lines or none; the same file twice adds nothing')
    .argument('<file>')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const csv = await readCsvArgument(file);
      if (csv.trim() === '') throw new UsageError(`${file} is empty`);
      const ctx = connect(cmd, 'finance');
      const name = path.basename(file);
      let result: BankImport;
      try {
        result = await ctx.api.importBankStatement(name, csv);
      } catch (err) {
        return refusedFile(err, 'invalid_bank_statement', name, ctx.json);
      }
      if (ctx.json) return writeJson({ file: name, ...result });
      writeLines([importLine(name, result)]);
    });
}

/** A CSV file named on the command line, read whole; one that cannot be read is bad input (exit 2). */
export async function readCsvArgument(file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** A file the API refused as malformed (`code`, with `details.problems`): each bad line as
 * `file:line: message` on stderr (or JSON), then bad input; any other error as it came. */
export function refusedFile(err: unknown, code: string, name: string, json: boolean): never {
  const problems = err instanceof ApiError && err.code === code ? bankProblemsSchema.safeParse(err.details) : null;
  if (!problems?.success) throw err;
  const lines = problems.data.problems;
  if (json) writeJson({ file: name, imported: false, problems: lines });
  else writeLines(lines.map((p) => `${name}:${p.line}: ${p.message}`), process.stderr);
  throw new UsageError(`${name} has ${lines.length} bad line${lines.length === 1 ? '' : 's'}; nothing was imported`);
}

export function importLine(name: string, r: BankImport): string {
  if (r.duplicateFile) return `${name} was imported before (import ${r.importId}): nothing added`;
  const known = r.lineCount - r.linesAdded;
  return `${name}: ${r.linesAdded} of ${r.lineCount} line${r.lineCount === 1 ? '' : 's'} added (import ${r.importId})${known > 0 ? `; ${known} already known from an earlier file` : ''}`;
}
