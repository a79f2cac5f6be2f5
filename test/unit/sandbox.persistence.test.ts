/** A sandbox with a state file continues where it stopped: its linked accounts, balances, orders,
 * payments, transfers, settlements and idempotency keys survive a restart; without one it starts
 * empty (tests). Checked through the official SDK over HTTP, as the app sees it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGateway } from '../../src/gateway';
import { loadConfig } from '../../src/config/config';
import { sandboxOptionsFrom, startSandbox } from '../../src/sandbox';

describe('sandbox persistence', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-state-'));
  const file = path.join(dir, 'sandbox-state.json');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const start = (stateFile?: string) => startSandbox({ ...sandboxOptionsFrom(loadConfig({})), port: 0, webhookUrl: null, transferProcessingDelayMs: 60_000, stateFile });

  test('when the sandbox restarts with its state file, then accounts, balances, transfers, pending work and idempotency keys carry on', async () => {
    const first = await start(file);
    const gateway = createGateway(loadConfig({ RAZORPAY_BASE_URL: first.baseUrl }));
    const account = await first.control.createLinkedAccount({ name: 'Dosa Corner' });
    await first.control.setPlatformBalance(50_000);
    const sent = await gateway.createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: 'key-before-restart', notes: { transaction_id: 'p1', order_id: 'o1' } });
    expect(sent.type).toBe('accepted');
    const transferId = sent.type === 'accepted' ? sent.entity.id : '';
    await first.close();
    expect(fs.existsSync(file)).toBe(true);

    const second = await startSandbox({ ...sandboxOptionsFrom(loadConfig({})), port: 0, webhookUrl: null, transferProcessingDelayMs: 60_000, stateFile: file });
    try {
      const again = createGateway(loadConfig({ RAZORPAY_BASE_URL: second.baseUrl }));
      // The transfer left pending by the stop is processed on start; the account and balance remain.
      expect(await again.fetchTransfer(transferId)).toMatchObject({ id: transferId, status: 'processed', recipient: account, amount: 8_100 });
      expect(await second.control.platformBalance()).toBeLessThan(50_000);
      expect((await second.control.transfers({ recipient: account })).map((t) => t.id)).toEqual([transferId]);
      // The same key and body after the restart is the same transfer, not a second one.
      const replay = await again.createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: 'key-before-restart', notes: { transaction_id: 'p1', order_id: 'o1' } });
      expect(replay).toMatchObject({ type: 'accepted', entity: { id: transferId } });
      expect(await second.control.transfers({ recipient: account })).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  test('when no state file is given, then a new sandbox starts empty', async () => {
    const fresh = await start();
    try {
      expect(await fresh.control.transfers()).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});
