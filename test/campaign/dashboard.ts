/** What someone on the Razorpay Dashboard does behind our back: the sandbox's own API, authenticated
 * with the platform's key, with no receipt or reference of ours. */
import { SANDBOX_SECRETS } from '../../src/devstack/topologyEnv';
import type { Topology } from '../../src/devstack/topologyTypes';
import { sleep } from './calls';

const platformAuth = () => `Basic ${Buffer.from(`${SANDBOX_SECRETS.RAZORPAY_KEY_ID}:${SANDBOX_SECRETS.RAZORPAY_KEY_SECRET}`).toString('base64')}`;

/** A refund of `amountPaise` of the payment; its id. */
export async function refundFromDashboard(t: Topology, paymentId: string, amountPaise: number): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${t.sandboxUrl}/v1/payments/${paymentId}/refund`, {
      method: 'POST', headers: { authorization: platformAuth(), 'content-type': 'application/json' }, body: JSON.stringify({ amount: amountPaise, notes: { by: 'dashboard' } }),
    }).catch(() => null);
    if (res?.ok) return ((await res.json()) as { id: string }).id;
    // The campaign's API faults hit this endpoint too (an answer lost after the refund was made): look
    // before asking again, as a person on the Dashboard would.
    const listed = await fetch(`${t.sandboxUrl}/v1/payments/${paymentId}/refunds`, { headers: { authorization: platformAuth() } }).catch(() => null);
    const made = listed?.ok ? ((await listed.json()) as { items: Array<{ id: string; amount: number }> }).items.find((r) => r.amount === amountPaise) : undefined;
    if (made) return made.id;
    if (Date.now() > deadline) throw new Error(`the Dashboard refund of ${paymentId} was refused: ${res ? `${res.status} ${await res.text()}` : 'no answer'}`);
    await sleep(1_000);
  }
}
