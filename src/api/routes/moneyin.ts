/** Registers every money-in route (orders, checkout callback, wallets, admin reference data, the
 * Razorpay webhook and its quarantine) with one set of dependencies, built once. */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config';
import type { Db } from '../../db/pool';
import { createGateway } from '../../gateway';
import type { Gateway } from '../../gateway/types';
import type { WebhookContext } from '../../webhooks/types';
import { leaveForSweep, type PayoutStarter } from '../../payouts/starter';
import type { ApiProviderBudget } from '../../moneyin/providerBudget';
import { adminRoutes } from './admin';
import { callbackRoutes } from './callbacks';
import { opsWebhookRoutes } from './opsWebhooks';
import { orderRoutes } from './orders';
import { walletRoutes } from './wallets';
import { webhookRoutes } from './webhooks';

export interface MoneyInApiDeps {
  config: Config;
  db: Db;
  /** Default: the Razorpay adapter built from config. */
  gateway?: Gateway;
  /** Default: payable rows wait for the payout sweep. */
  payoutStarter?: PayoutStarter;
  temporal?: Client;
  /** The process's Razorpay budget for order creates (built once by the server). */
  providerBudget?: ApiProviderBudget;
}

export async function moneyInRoutes(app: FastifyInstance, deps: MoneyInApiDeps): Promise<void> {
  const ctx: WebhookContext = {
    db: deps.db,
    config: deps.config,
    gateway: deps.gateway ?? createGateway(deps.config),
    payoutStarter: deps.payoutStarter ?? leaveForSweep,
    temporal: deps.temporal,
    providerBudget: deps.providerBudget,
  };
  await app.register(async (scope) => orderRoutes(scope, ctx));
  await app.register(async (scope) => callbackRoutes(scope, ctx));
  await app.register(async (scope) => walletRoutes(scope, ctx));
  await app.register(async (scope) => adminRoutes(scope, ctx));
  await app.register(async (scope) => webhookRoutes(scope, ctx));
  // Beside the receiver: what it set aside (role ops).
  await app.register(async (scope) => opsWebhookRoutes(scope, ctx));
}
