/** Where the `payouts` CLI finds its API and credential. `npm run dev` writes .data/stack.json
 * (`writeStackFile`) with the API's URL, the Web UI's and one dev key per role; the CLI reads it when
 * neither a flag nor the environment names the API. Precedence, for the URL and the key each:
 * `--api-url`/`--key` > `PAYOUTS_API_URL`/`PAYOUTS_API_KEY` > the stack file (the key of the role the
 * command needs). A stack file's key is only sent to that stack's own API. */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { PlainRole } from '../../auth/roles';
import { writePrivateFile } from '../../devstack/privateFiles';

const key = z.string().min(1);
export const stackInfoSchema = z.object({
  apiUrl: z.string().url(),
  temporalUiUrl: z.string().url(),
  keys: z.object({ ordering: key, ops: key, admin: key, finance: key }),
});
export type StackInfo = z.infer<typeof stackInfoSchema>;

/** This checkout's root: the CLI lives in src/cli/payouts/. */
export const CLI_PROJECT_ROOT = path.resolve(__dirname, '../../..');

export function stackFilePath(projectRoot: string): string {
  return path.join(projectRoot, '.data', 'stack.json');
}

/** Called by `npm run dev` once the API listens and the dev keys exist. The file holds keys: 0600,
 * written whole (temporary file, then rename) so a CLI never reads half of it. */
export async function writeStackFile(projectRoot: string, info: StackInfo): Promise<string> {
  const file = stackFilePath(projectRoot);
  const parsed = stackInfoSchema.parse(info);
  await writePrivateFile(file, `${JSON.stringify(parsed, null, 2)}\n`);
  return file;
}

export type StackFile = { file: string; info: StackInfo | null; problem?: string };

/** The stack file (`PAYOUTS_STACK_FILE`, else this checkout's .data/stack.json); absent is normal. */
export function readStackFile(env: NodeJS.ProcessEnv = process.env): StackFile {
  const file = env.PAYOUTS_STACK_FILE || stackFilePath(CLI_PROJECT_ROOT);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { file, info: null };
  }
  try {
    return { file, info: stackInfoSchema.parse(JSON.parse(text)) };
  } catch {
    return { file, info: null, problem: `${file} is not a stack file written by npm run dev; ignored` };
  }
}

export interface ConnectionFlags { apiUrl?: string; key?: string }

export type Connection = {
  apiUrl: string;
  key: string;
  /** The Web UI of the stack the URL came from, when known (links in `show`). */
  temporalUiUrl: string | null;
  /** Where the URL came from, for error messages ("is npm run dev running?"). */
  source: 'flag' | 'env' | 'stack';
};

export type Resolved = { ok: true; connection: Connection } | { ok: false; message: string };

const sameOrigin = (a: string, b: string): boolean => {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
};

/** Pure: the flags, the environment and the stack file in, the API and the key for `role` out. */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv, stack: StackFile, role: PlainRole): Resolved {
  const fromFlag = flags.apiUrl?.trim();
  const fromEnv = env.PAYOUTS_API_URL?.trim();
  const apiUrl = fromFlag || fromEnv || stack.info?.apiUrl;
  if (!apiUrl) {
    return { ok: false, message: `no API to talk to: pass --api-url, set PAYOUTS_API_URL, or start the local stack with npm run dev (it writes ${stack.file})` };
  }
  try {
    const url = new URL(apiUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    return { ok: false, message: `the API URL ${JSON.stringify(apiUrl)} is not an http(s) URL` };
  }
  const stackMatches = !!stack.info && sameOrigin(stack.info.apiUrl, apiUrl);
  const key = flags.key?.trim() || env.PAYOUTS_API_KEY?.trim() || (stackMatches ? stack.info!.keys[role] : undefined);
  if (!key) {
    const hint = stack.info ? ` (${stack.file} has keys for ${stack.info.apiUrl} only)` : '';
    return { ok: false, message: `no API key for ${apiUrl}: pass --key or set PAYOUTS_API_KEY to a key with the ${role} role${hint}` };
  }
  return {
    ok: true,
    connection: {
      apiUrl: apiUrl.replace(/\/+$/, ''),
      key,
      temporalUiUrl: env.PAYOUTS_TEMPORAL_UI_URL?.trim() || (stackMatches ? stack.info!.temporalUiUrl : null),
      source: fromFlag ? 'flag' : fromEnv ? 'env' : 'stack',
    },
  };
}
