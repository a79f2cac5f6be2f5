/** What every command shares: the global options, the API client for the role the command needs,
 * the output style, and the two ways a command ends badly (exit 2: bad input; exit 1: it failed). */
import os from 'node:os';
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import type { PlainRole } from '../../auth/roles';
import { isIsoDate } from '../../domain/calendar';
import { createApiClient, type ApiClient } from './apiClient';
import type { Style } from './output';
import { readStackFile, resolveConnection, type Connection } from './stack';

/** Bad input: a flag, an argument, a file that cannot be read. Exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The command ran and did not succeed (some decisions refused, a run failed). Exit 1. */
export class Failure extends Error {
  override name = 'Failure';
}

export interface GlobalOptions { apiUrl?: string; key?: string; actor?: string; json?: boolean }

export interface CommandContext {
  api: ApiClient;
  connection: Connection;
  style: Style;
  json: boolean;
}

/** Resolves the API and key for `role` (flags > env > .data/stack.json) and builds the client. */
export function connect(cmd: Command, role: PlainRole): CommandContext {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  const stack = readStackFile();
  if (stack.problem) process.stderr.write(`warning: ${stack.problem}\n`);
  const resolved = resolveConnection({ apiUrl: globals.apiUrl, key: globals.key }, process.env, stack, role);
  if (!resolved.ok) throw new UsageError(resolved.message);
  const { connection } = resolved;
  const actor = globals.actor?.trim() || process.env.USER || safeUsername();
  const api = createApiClient({
    apiUrl: connection.apiUrl,
    key: connection.key,
    actor,
    unreachableHint: connection.source === 'stack' ? `the URL is from ${stack.file}: is npm run dev running?` : undefined,
  });
  return { api, connection, style: { tty: process.stdout.isTTY === true }, json: globals.json === true };
}

function safeUsername(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return undefined;
  }
}

/** An IST day given as a flag: refused here, before any call, when it is not a real date. */
export function isoDayFlag(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isIsoDate(value)) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a date YYYY-MM-DD that exists`);
  return value;
}
