/** Temporal client and worker connections, built once from config. */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config/config';
import { installRuntime } from './runtime';

export async function connectClient(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

export function connectWorker(config: Pick<Config, 'TEMPORAL_ADDRESS'>): Promise<NativeConnection> {
  installRuntime();
  return NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
}
