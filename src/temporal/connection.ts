/** Temporal client and worker connections, built once from config.
 *
 * TLS is on when TEMPORAL_TLS=on, when any TLS file is set, or when an API key is set (Temporal
 * Cloud takes API keys over TLS only). Without a CA file the server certificate is checked against
 * the system roots (Temporal Cloud); with cert + key files the connection is mTLS. The files are
 * read once, when the options are built. */
import { tracedClientInterceptors } from './tracing';
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { ConfigError, type Config } from '../config/config';
import { installRuntime } from './runtime';

type TlsKeys = 'TEMPORAL_TLS' | 'TEMPORAL_TLS_CA_FILE' | 'TEMPORAL_TLS_CERT_FILE' | 'TEMPORAL_TLS_KEY_FILE' | 'TEMPORAL_TLS_SERVER_NAME' | 'TEMPORAL_API_KEY';

/** What a Temporal connection needs from config; the TLS keys are optional so a bare
 * `{ TEMPORAL_ADDRESS }` (tests, the dev stack) still means a plain local connection. */
export type TemporalConnectionConfig = Pick<Config, 'TEMPORAL_ADDRESS'> & Partial<Pick<Config, TlsKeys>>;

/** Accepted as is by both `Connection.connect` (@temporalio/client) and `NativeConnection.connect`
 * (@temporalio/worker). */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

function readPem(key: TlsKeys, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${key}: cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
}

export function temporalConnectionOptions(config: TemporalConnectionConfig): TemporalConnectionOptions {
  const { TEMPORAL_TLS_CA_FILE: caFile, TEMPORAL_TLS_CERT_FILE: certFile, TEMPORAL_TLS_KEY_FILE: keyFile } = config;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const [set, missing] = certFile === undefined ? ['TEMPORAL_TLS_KEY_FILE', 'TEMPORAL_TLS_CERT_FILE'] : ['TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_KEY_FILE'];
    throw new ConfigError(`${set} is set but ${missing} is not: a client certificate (mTLS) needs both TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE`);
  }
  const options: TemporalConnectionOptions = { address: config.TEMPORAL_ADDRESS };
  if (config.TEMPORAL_API_KEY !== undefined) options.apiKey = config.TEMPORAL_API_KEY;
  const useTls = config.TEMPORAL_TLS === 'on' || caFile !== undefined || certFile !== undefined
    || config.TEMPORAL_TLS_SERVER_NAME !== undefined || options.apiKey !== undefined;
  if (!useTls) return options;
  const tls: TLSConfig = {};
  if (caFile !== undefined) tls.serverRootCACertificate = readPem('TEMPORAL_TLS_CA_FILE', caFile);
  if (certFile !== undefined && keyFile !== undefined) {
    tls.clientCertPair = { crt: readPem('TEMPORAL_TLS_CERT_FILE', certFile), key: readPem('TEMPORAL_TLS_KEY_FILE', keyFile) };
  }
  if (config.TEMPORAL_TLS_SERVER_NAME !== undefined) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  options.tls = tls;
  return options;
}

/** Connects a client with options already built (the startup retry builds them once, so a config
 * mistake fails at once instead of being retried). `connectTimeoutMs` bounds the wait for the
 * server (SDK default 10 s: grpc-js keeps retrying a refused port until then rather than failing
 * at once). A failed attempt closes its gRPC channel. */
export async function clientFromOptions(options: TemporalConnectionOptions, namespace: string, connectTimeoutMs?: number): Promise<Client> {
  const connection = Connection.lazy(connectTimeoutMs === undefined ? options : { ...options, connectTimeout: connectTimeoutMs });
  try {
    await connection.ensureConnected();
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  return new Client({ connection, namespace, interceptors: tracedClientInterceptors() });
}

/** Connects a worker's native connection with options already built; installs the runtime first. */
export function workerConnectionFromOptions(options: TemporalConnectionOptions): Promise<NativeConnection> {
  installRuntime();
  return NativeConnection.connect(options);
}

export async function connectClient(config: TemporalConnectionConfig & Pick<Config, 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  return clientFromOptions(temporalConnectionOptions(config), config.TEMPORAL_NAMESPACE);
}

export function connectWorker(config: TemporalConnectionConfig): Promise<NativeConnection> {
  installRuntime();
  return NativeConnection.connect(temporalConnectionOptions(config));
}
