/** Runs the Temporal dev server and PostgreSQL as one child process for the test harness: prints
 * `READY {json}` once both answer, and stops both on SIGTERM/SIGINT or when stdin closes. */
import path from 'node:path';
import { startServices } from './services';

async function main(): Promise<void> {
  const stateDir = process.argv[2];
  if (!stateDir) throw new Error('usage: servicesMain <stateDir>');
  const services = await startServices({
    projectRoot: path.resolve(__dirname, '../..'),
    stateDir,
    persistent: false,
    temporalPort: 0,
    temporalUiPort: null,
    postgresPort: 0,
    externalDatabaseUrl: process.env.DATABASE_URL || undefined,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await services.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  process.stdout.write(`READY ${JSON.stringify({ adminDatabaseUrl: services.adminDatabaseUrl, temporalAddress: services.temporalAddress })}\n`);
}

main().catch((err) => {
  process.stderr.write(`services failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
