/** Starts the two servers everything runs on: a Temporal dev server and PostgreSQL (embedded unless
 * DATABASE_URL is given). Used by the one-command stack and by the integration test harness. */
import path from 'node:path';
import { freePort } from './ports';
import { ensurePrivateDir } from './privateFiles';
import { ensureDatabase, startEmbeddedPostgres, type RunningPostgres } from './postgres';
import { installTemporalCli, startTemporalDevServer, type RunningTemporal } from './temporal';

export interface ServicesOptions {
  projectRoot: string;
  /** Where state lives (.data for the stack, a temp folder for tests). */
  stateDir: string;
  /** Keep Temporal and PostgreSQL state across restarts. */
  persistent: boolean;
  /** Fixed ports for the stack; 0 picks free ones (tests). */
  temporalPort: number;
  temporalUiPort: number | null;
  postgresPort: number;
  /** An existing PostgreSQL server; when set no embedded one is started. */
  externalDatabaseUrl?: string;
  log?: (line: string) => void;
}

export interface RunningServices {
  /** URL of a maintenance database on the server (create your own databases from it). */
  adminDatabaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  stop(): Promise<void>;
}

export async function startServices(opts: ServicesOptions): Promise<RunningServices> {
  ensurePrivateDir(opts.stateDir);
  const cli = await installTemporalCli(opts.projectRoot);
  let postgres: RunningPostgres | undefined;
  let temporal: RunningTemporal | undefined;
  try {
    const [pg, tp] = await Promise.all([
      opts.externalDatabaseUrl
        ? Promise.resolve(undefined)
        : (async () => startEmbeddedPostgres({
            dataDir: path.join(opts.stateDir, 'postgres'),
            port: opts.postgresPort || (await freePort()),
            persistent: opts.persistent,
            log: opts.log,
          }))(),
      (async () => startTemporalDevServer({
        cli,
        port: opts.temporalPort || (await freePort()),
        uiPort: opts.temporalUiPort,
        store: { file: path.join(opts.stateDir, 'temporal.sqlite'), durable: opts.persistent },
        log: opts.log,
      }))(),
    ]);
    postgres = pg;
    temporal = tp;
  } catch (err) {
    await Promise.allSettled([postgres?.stop(), temporal?.stop()]);
    throw err;
  }
  const pgServer = postgres;
  const temporalServer = temporal;
  return {
    adminDatabaseUrl: opts.externalDatabaseUrl ?? pgServer!.adminUrl,
    temporalAddress: temporalServer.address,
    temporalUiUrl: temporalServer.uiUrl,
    async stop() {
      await Promise.allSettled([temporalServer.stop(), pgServer?.stop()]);
    },
  };
}

export { ensureDatabase };
