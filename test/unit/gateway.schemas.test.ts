/** The adapter reads the documented variants of a transfer: `transfer_status` (the Transfers entity in
 * the documentation) as well as `status`, notes with null values, unknown extra fields kept; and one
 * strange transfer does not make a listing unreadable (it is logged whole and skipped). The listing
 * cases go over HTTP through the official SDK, to a minimal provider that answers with the
 * documented examples. */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { createGateway } from '../../src/gateway';
import { transferSchema } from '../../src/gateway/schemas';
import type { Gateway } from '../../src/gateway/types';
import { logger } from '../../src/logger';

const EXAMPLES = path.resolve(__dirname, '../fixtures/razorpay-examples');
const example = (name: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'));
const documentedCollection = example('entity.transfer.json') as { items: Array<Record<string, unknown>> };
const directProcessed = example('entity.transfer.direct.processed.json');

describe('the transfer schema', () => {
  test('when a documented transfer carries transfer_status instead of status, then it parses with that status and keeps the original key', () => {
    const item = documentedCollection.items[0]!;
    expect(item.status).toBeUndefined();
    const parsed = transferSchema.parse(item);
    expect(parsed).toMatchObject({ id: 'trf_ECB6hP5cyN30pU', status: 'failed', transfer_status: 'failed', error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', source: 'transfer' } });
  });

  test('when a transfer carries both keys, then status wins', () => {
    expect(transferSchema.parse({ ...directProcessed, transfer_status: 'failed' }).status).toBe('processed');
  });

  test('when notes hold null values, then they parse and stay null', () => {
    const parsed = transferSchema.parse({ ...directProcessed, notes: { transaction_id: 'p-1', branch: null, count: 3 } });
    expect(parsed.notes).toEqual({ transaction_id: 'p-1', branch: null, count: '3' });
  });

  test('when the transfer carries fields we do not know (also inside error), then they are kept', () => {
    const parsed = transferSchema.parse({ ...directProcessed, account_code: 'GoodWill_Traders-1.', error: { ...(directProcessed.error as object), metadata: { a: 1 } } });
    expect(parsed).toMatchObject({ account_code: 'GoodWill_Traders-1.', error: { id: 'trf_JqpKevElHShZkw', metadata: { a: 1 } } });
  });

  test('when error is null, then it reads as no error', () => {
    expect(transferSchema.parse({ ...directProcessed, error: null }).error).toMatchObject({ code: null, description: null });
  });

  test('when the status is neither key nor a known value, then the transfer does not parse', () => {
    const { status: _status, ...withoutStatus } = directProcessed;
    expect(transferSchema.safeParse(withoutStatus).success).toBe(false);
    expect(transferSchema.safeParse({ ...directProcessed, status: 'on_the_moon' }).success).toBe(false);
  });
});

describe('listings over HTTP through the SDK', () => {
  let server: http.Server;
  let gateway: Gateway;
  let pages: Record<string, unknown>;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const route = (req.url ?? '').split('?')[0]!;
      const body = pages[route];
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? { error: { code: 'BAD_REQUEST_ERROR', description: 'The requested URL was not found on the server.' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    gateway = createGateway({ ...loadConfig(), RAZORPAY_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const strange = { id: 'trf_Strange0000001', entity: 'transfer', status: 'on_the_moon', amount: 'a lot' };

  test('when the listing is the documented collection with transfer_status, then every transfer in it is read', async () => {
    pages = { '/v1/transfers': documentedCollection };
    const listed = await gateway.listTransfers({ from: new Date(0), to: new Date() });
    expect(listed).toEqual([expect.objectContaining({ id: 'trf_ECB6hP5cyN30pU', status: 'failed', amount: 100 })]);
  });

  test('when one transfer in a listing does not parse, then the others are returned and the strange one is logged whole', async () => {
    const good = { ...directProcessed, notes: { transaction_id: 'p-2', branch: null } };
    pages = { '/v1/transfers': { entity: 'collection', count: 2, items: [strange, good] } };
    const logged = jest.spyOn(logger, 'error');
    try {
      const listed = await gateway.listTransfers({ from: new Date(0), to: new Date() });
      expect(listed.map((t) => t.id)).toEqual(['trf_JqpKevElHShZkw']);
      expect(logged).toHaveBeenCalledWith(expect.objectContaining({ operation: 'transfers.list', item: strange }), expect.stringContaining('skipped'));
    } finally {
      logged.mockRestore();
    }
  });

  test("when one transfer of a payment's listing does not parse, then the others are returned", async () => {
    pages = { '/v1/payments/pay_Strange0000001/transfers': { entity: 'collection', count: 2, items: [documentedCollection.items[1], strange] } };
    expect((await gateway.listPaymentTransfers('pay_Strange0000001')).map((t) => t.error.code)).toEqual(['BAD_REQUEST_PAYMENT_FEES_GREATER_THAN_AMOUNT']);
  });
});
