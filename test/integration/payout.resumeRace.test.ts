/** A resume that lands while a run's step is finding the pause is not lost (issue 19 item 8): the
 * run used to clear a `resumed` flag when it began to wait, so a `transfersResumed` signal heard
 * while the money-moving activity was answering "paused" was dropped and the payout waited
 * PAYOUT_HUMAN_RECHECK_MS (an hour) although transfers were on again. Real Temporal, PostgreSQL and
 * the sandbox; the pause lands between the claim's commit and the activity's check (a trigger on
 * the claim), and the real activity's answer is held until the signal has reached the run. */
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { PAYOUT_WORKFLOW_TYPE, payoutStateQuery, payoutWorkflowId, transfersResumedSignal } from '../../src/contracts/payout';
import { createGateway } from '../../src/gateway';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { createPayoutWorkers, type PayoutWorkers } from '../../src/worker';
import { testServices } from '../support/db';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';

describe('payout: a resume racing the claim', () => {
  let stack: PayoutStack;
  let workers: PayoutWorkers | undefined;
  let running: Promise<void>;
  let connection: NativeConnection;
  const taskQueue = `resume-race-${Date.now()}`;
  let notSent: () => void = () => undefined;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'resume-race-api', env: { PAYOUT_HUMAN_RECHECK_MS: '600000' } });
    const activities = createActivities({ db: stack.db, config: stack.config, gateway: createGateway(stack.config) });
    let held = false;
    const sendDirectTransfer: typeof activities.sendDirectTransfer = async (req) => {
      const sent = await activities.sendDirectTransfer(req);
      if (sent.type === 'not_sent' && !held) {
        held = true;
        notSent();
        await new Promise<void>((resolve) => { release = resolve; });
      }
      return sent;
    };
    connection = await NativeConnection.connect({ address: testServices().temporalAddress });
    workers = await createPayoutWorkers({ connection, namespace: 'default', taskQueue, activities: { ...activities, sendDirectTransfer }, budget: stack.config });
    running = workers.run();
  });

  afterAll(async () => {
    release();
    workers?.shutdown();
    await running;
    await connection?.close();
    await stack?.close();
  });

  test('when ops resume while the request that found the pause is still answering, then the run claims again at once and pays once', async () => {
    const account = await stack.sandbox.control.createLinkedAccount();
    const order = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await stack.db.query(`
      CREATE FUNCTION test_pause_on_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE transfer_switch SET paused = true, reason = 'paused between claim and send', changed_by = 'test', changed_at = now() WHERE id = 1;
        RETURN NEW;
      END $$`);
    await stack.db.query(`
      CREATE TRIGGER test_pause_on_claim AFTER UPDATE OF status ON payouts FOR EACH ROW
      WHEN (NEW.status = 'processing' AND OLD.status IS DISTINCT FROM 'processing' AND NEW.order_id = '${order.orderId}')
      EXECUTE FUNCTION test_pause_on_claim()`);
    const answered = new Promise<void>((resolve) => { notSent = resolve; });
    const handle = await stack.temporal.client.workflow.start(PAYOUT_WORKFLOW_TYPE, {
      taskQueue, workflowId: payoutWorkflowId(order.orderId), args: [{ orderId: order.orderId }],
    });
    await answered;
    await stack.db.query('DROP TRIGGER test_pause_on_claim ON payouts');
    // What the ops API does on resume: the switch first, then the signal to the waiting runs.
    await setTransfersPaused(stack.db, { paused: false, actor: 'test', reason: 'incident over' });
    await handle.signal(transfersResumedSignal);
    // The money-moving call is a remote activity: the run hears the signal in a workflow task of its
    // own while the activity is still out, before the activity's answer.
    await eventually(async () => (await handle.query(payoutStateQuery)).steps, (steps) => steps.some((s) => s.detail === 'transfers resumed'), 20_000);
    release();
    const row = await eventually(() => payoutRow(stack.db, order.orderId), (p) => p?.status === 'settled', 30_000);
    expect(row?.attempts).toBe(2);
    expect(await stack.sandbox.control.transfers({ recipient: account })).toHaveLength(1);
    await handle.result();
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-resumed-during-send');
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-resumed-during-send-patches-up-front');
  }, 90_000);
});
