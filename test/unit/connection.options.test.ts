/** Connection option builders: Temporal TLS / API key, PostgreSQL pool size, timeout and TLS. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { DEFAULT_CONNECT_TIMEOUT_MS, createPool, poolConfig, poolOptionsFrom, urlCarriesSsl } from '../../src/db/pool';
import { temporalConnectionOptions } from '../../src/temporal/connection';

// pg's own config resolution (the URL parsed over the explicit config): what a client will use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConnectionParameters = require('pg/lib/connection-parameters') as new (config: object) => { ssl: unknown };

let dir: string;
const file = (name: string) => path.join(dir, name);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payouts-conn-'));
  fs.writeFileSync(file('ca.pem'), 'CA PEM');
  fs.writeFileSync(file('client.crt'), 'CLIENT CERT PEM');
  fs.writeFileSync(file('client.key'), 'CLIENT KEY PEM');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('temporalConnectionOptions', () => {
  test('when nothing about TLS is set, then the connection is plain', () => {
    expect(temporalConnectionOptions({ TEMPORAL_ADDRESS: '127.0.0.1:7233' })).toEqual({ address: '127.0.0.1:7233' });
    const defaults = loadConfig({});
    expect(temporalConnectionOptions(defaults)).toEqual({ address: '127.0.0.1:7233' });
  });

  test('when TEMPORAL_TLS=on alone, then TLS with the system roots', () => {
    const options = temporalConnectionOptions({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_TLS: 'on' });
    expect(options).toEqual({ address: 'temporal:7233', tls: {} });
  });

  test('when CA, cert and key files are set, then they are read as Buffers into mTLS options', () => {
    const options = temporalConnectionOptions({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TLS_CA_FILE: file('ca.pem'),
      TEMPORAL_TLS_CERT_FILE: file('client.crt'),
      TEMPORAL_TLS_KEY_FILE: file('client.key'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(options.apiKey).toBeUndefined();
    expect(Buffer.isBuffer(options.tls?.serverRootCACertificate)).toBe(true);
    expect(Buffer.from(options.tls!.serverRootCACertificate!).toString()).toBe('CA PEM');
    expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toBe('CLIENT CERT PEM');
    expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toBe('CLIENT KEY PEM');
    expect(options.tls?.serverNameOverride).toBe('temporal.internal');
  });

  test('when only a CA file is set (TEMPORAL_TLS off), then TLS is still on', () => {
    const options = temporalConnectionOptions({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_TLS: 'off', TEMPORAL_TLS_CA_FILE: file('ca.pem') });
    expect(options.tls?.serverRootCACertificate).toBeDefined();
    expect(options.tls?.clientCertPair).toBeUndefined();
  });

  test('when an API key is set, then TLS is implied (Temporal Cloud)', () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'key-abc' });
    expect(config.TEMPORAL_TLS).toBe('off');
    expect(temporalConnectionOptions(config)).toEqual({ address: 'ns.acct.tmprl.cloud:7233', apiKey: 'key-abc', tls: {} });
  });

  test('when a cert is set without its key (or the reverse), then it is refused naming both keys', () => {
    const certOnly = () => temporalConnectionOptions({ TEMPORAL_ADDRESS: 't:7233', TEMPORAL_TLS_CERT_FILE: file('client.crt') });
    expect(certOnly).toThrow(ConfigError);
    expect(certOnly).toThrow(/TEMPORAL_TLS_CERT_FILE is set but TEMPORAL_TLS_KEY_FILE is not/);
    const keyOnly = () => temporalConnectionOptions({ TEMPORAL_ADDRESS: 't:7233', TEMPORAL_TLS_KEY_FILE: file('client.key') });
    expect(keyOnly).toThrow(/TEMPORAL_TLS_KEY_FILE is set but TEMPORAL_TLS_CERT_FILE is not/);
  });

  test('when a TLS file cannot be read, then the error names the key and the path', () => {
    const missing = file('nope.pem');
    expect(() => temporalConnectionOptions({ TEMPORAL_ADDRESS: 't:7233', TEMPORAL_TLS_CA_FILE: missing }))
      .toThrow(new RegExp(`TEMPORAL_TLS_CA_FILE: cannot read ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});

describe('poolConfig / poolOptionsFrom', () => {
  const url = 'postgres://u:p@db.example:5432/payouts';

  test('when given a number, then it is the pool size and the connect timeout defaults to 5 s', () => {
    const config = poolConfig(url, 20);
    expect(config).toMatchObject({ connectionString: url, max: 20, connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS, application_name: 'payouts' });
    expect(config.ssl).toBeUndefined();
    expect(poolConfig(url)).toMatchObject({ max: 10, connectionTimeoutMillis: 5000 });
  });

  test('when built from Config, then size, timeout and TLS come from the DATABASE_* keys', () => {
    const config = loadConfig({ DATABASE_POOL_MAX: '7', DATABASE_CONNECT_TIMEOUT_MS: '1500', DATABASE_SSLMODE: 'verify-full', DATABASE_SSL_CA_FILE: file('ca.pem') });
    const options = poolOptionsFrom(config);
    // DATABASE_POOL_MIN's default (4) is kept open while idle; it never exceeds the maximum.
    expect(options).toEqual({ max: 7, min: 4, connectTimeoutMs: 1500, sslmode: 'verify-full', sslCaFile: file('ca.pem') });
    expect(poolConfig(url, options)).toMatchObject({ max: 7, min: 4, connectionTimeoutMillis: 1500, ssl: { rejectUnauthorized: true, ca: 'CA PEM' } });
    expect(poolOptionsFrom(loadConfig({}))).toEqual({ max: 10, min: 4, connectTimeoutMs: 5000, sslmode: 'disable' });
    expect(poolOptionsFrom(loadConfig({ DATABASE_POOL_MAX: '3', DATABASE_POOL_MIN: '9' }))).toMatchObject({ max: 3, min: 3 });
  });

  test('sslmode maps to node-postgres ssl options', () => {
    expect(poolConfig(url, { sslmode: 'disable' }).ssl).toBeUndefined();
    expect(poolConfig(url, { sslmode: 'require', sslCaFile: file('ca.pem') }).ssl).toEqual({ rejectUnauthorized: false });
    expect(poolConfig(url, { sslmode: 'verify-full' }).ssl).toEqual({ rejectUnauthorized: true });
    expect(poolConfig(url, { sslmode: 'verify-full', sslCaFile: file('ca.pem') }).ssl).toEqual({ rejectUnauthorized: true, ca: 'CA PEM' });
    expect(() => poolConfig(url, { sslmode: 'verify-full', sslCaFile: file('nope.pem') })).toThrow(/DATABASE_SSL_CA_FILE: cannot read/);
  });

  test('when the URL carries TLS parameters, then the URL wins and our ssl is left unset', () => {
    const withUrlTls = `${url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(file('ca.pem'))}`;
    expect(urlCarriesSsl(withUrlTls)).toBe(true);
    expect(urlCarriesSsl(url)).toBe(false);
    expect(urlCarriesSsl(`${url}?application_name=x`)).toBe(false);
    expect(urlCarriesSsl(`${url}?sslmode=disable`)).toBe(true);
    const config = poolConfig(withUrlTls, { sslmode: 'require' });
    expect(config.ssl).toBeUndefined();
    // …and pg then reads the CA from the URL and verifies (rejectUnauthorized not switched off).
    const resolved = new ConnectionParameters(config);
    expect(resolved.ssl).toEqual({ ca: 'CA PEM' });
    // A URL `sslmode=disable` turns TLS off even with verify-full configured.
    expect(new ConnectionParameters(poolConfig(`${url}?sslmode=disable`, { sslmode: 'verify-full' })).ssl).toBe(false);
  });

  test('when the URL carries no TLS parameters, then pg uses our ssl options', () => {
    const resolved = new ConnectionParameters(poolConfig(url, { sslmode: 'verify-full', sslCaFile: file('ca.pem') }));
    expect(resolved.ssl).toEqual({ rejectUnauthorized: true, ca: 'CA PEM' });
  });

  test('createPool passes the options to the pool (no connection is opened)', async () => {
    const pool = createPool(url, { max: 3, connectTimeoutMs: 1234, sslmode: 'require' });
    try {
      expect(pool.options).toMatchObject({ max: 3, connectionTimeoutMillis: 1234, ssl: { rejectUnauthorized: false } });
    } finally {
      await pool.end();
    }
    const legacy = createPool(url, 20);
    try {
      expect(legacy.options).toMatchObject({ max: 20, connectionTimeoutMillis: 5000 });
    } finally {
      await legacy.end();
    }
  });
});
