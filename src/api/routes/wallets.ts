/** Wallets (role `ordering`): balance and ledger, and top-ups (a Razorpay order; the captured payment credits once). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { csvSafe, paiseSchema } from '../../domain/schemas';
import type { MoneyInDeps } from '../../moneyin/deps';
import { createTopup, topupView } from '../../moneyin/topups';
import { walletView } from '../../moneyin/wallets';
import { requires } from '../../auth/routeAuth';
import { AppError } from '../errors';
import { documented } from '../openapi';

const walletParams = z.object({ ownerKind: z.enum(['employer', 'employee']), ownerId: csvSafe(z.string().trim().min(1).max(64)) });
const topupBody = z.object({
  amountPaise: paiseSchema.min(100),
  clientReference: csvSafe(z.string().trim().min(1).max(100)).nullable().default(null),
}).strict();

export async function walletRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  app.post('/v1/wallets/:ownerKind/:ownerId/top-ups', documented(requires('ordering'), { summary: 'Top a wallet up through Razorpay checkout (credited once the payment is captured)', tags: ['wallets'], params: walletParams, body: topupBody, success: 201 }), async (request, reply) => {
    const owner = walletParams.parse(request.params);
    const body = topupBody.parse(request.body);
    const { topup, created } = await createTopup(deps, { ...owner, ...body });
    return reply.status(created ? 201 : 200).send({ topup, checkout: { keyId: deps.config.RAZORPAY_KEY_ID, orderId: topup.gatewayOrderId, amountPaise: topup.amountPaise } });
  });

  app.get('/v1/wallets/:ownerKind/:ownerId', documented(requires('ordering'), { summary: 'A wallet balance and its ledger', tags: ['wallets'], params: walletParams }), async (request) => {
    const owner = walletParams.parse(request.params);
    const wallet = await walletView(deps.db, owner);
    if (!wallet) throw new AppError(404, 'wallet_not_found', `no ${owner.ownerKind} wallet ${owner.ownerId}`);
    return { wallet };
  });

  app.get('/v1/top-ups/:topupId', documented(requires('ordering'), { summary: 'A top-up and its status', tags: ['wallets'] }), async (request) => {
    const { topupId } = z.object({ topupId: z.string().min(1).max(64) }).parse(request.params);
    const topup = await topupView(deps, topupId);
    if (!topup) throw new AppError(404, 'topup_not_found', `top-up ${topupId} does not exist`);
    return { topup };
  });
}
