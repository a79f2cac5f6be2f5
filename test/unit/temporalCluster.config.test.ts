/** The self-hosted cluster's config (issue 23, item 1): what the four services are told. */
import { CLUSTER_DYNAMIC_CONFIG, CLUSTER_SERVICES, clusterConfig, dynamicConfigFile } from '../../src/devstack/temporalCluster';

const ports = { history: { grpc: 7234, membership: 6934 }, matching: { grpc: 7235, membership: 6935 }, frontend: { grpc: 7233, membership: 6933, http: 7243 }, worker: { grpc: 7239, membership: 6939 } };
const config = clusterConfig({
  db: { host: '127.0.0.1', port: 5432, user: 'temporal', password: 's3cret', temporal: 'payouts_temporal', visibility: 'payouts_temporal_visibility' },
  ports, numHistoryShards: 4, dynamicConfigFile: '/state/dynamicconfig.yaml',
}) as any; // eslint-disable-line @typescript-eslint/no-explicit-any

test('persistence and visibility are PostgreSQL databases of their own, on the given server', () => {
  const { persistence } = config;
  expect(persistence).toMatchObject({ defaultStore: 'default', visibilityStore: 'visibility', numHistoryShards: 4 });
  expect(persistence.datastores.default.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'payouts_temporal', connectAddr: '127.0.0.1:5432', user: 'temporal', password: 's3cret' });
  expect(persistence.datastores.visibility.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'payouts_temporal_visibility' });
});

test('each of the four services has its own ports; clients and the cluster metadata name the frontend', () => {
  expect(Object.keys(config.services).sort()).toEqual([...CLUSTER_SERVICES].sort());
  for (const s of CLUSTER_SERVICES) expect(config.services[s].rpc).toMatchObject({ grpcPort: ports[s].grpc, membershipPort: ports[s].membership, bindOnLocalHost: true });
  expect(config.services.frontend.rpc.httpPort).toBe(7243);
  expect(config.publicClient.hostPort).toBe('127.0.0.1:7233');
  expect(config.clusterMetadata.clusterInformation.active.rpcAddress).toBe('127.0.0.1:7233');
  expect(config.dynamicConfigClient.filepath).toBe('/state/dynamicconfig.yaml');
});

test('the dynamic config keeps one partition per task queue (the provider budget is a per-partition rate limit)', () => {
  const file = dynamicConfigFile(CLUSTER_DYNAMIC_CONFIG) as Record<string, Array<{ value: unknown; constraints: object }>>;
  expect(file['matching.numTaskqueueReadPartitions']).toEqual([{ value: 1, constraints: {} }]);
  expect(file['matching.numTaskqueueWritePartitions']).toEqual([{ value: 1, constraints: {} }]);
  expect(Object.keys(file)).toEqual(Object.keys(CLUSTER_DYNAMIC_CONFIG));
});
