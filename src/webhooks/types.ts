/** What a webhook effect is: it runs inside the transaction that records the event id (so a
 * duplicate delivery changes nothing), parses its payload with zod (a bad payload throws a ZodError,
 * the transaction rolls back, the event is set aside in quarantined_webhooks and answered 2xx), and returns the steps to run after the commit.
 * Capabilities (moneyin, payouts, recon) export effects of this type; src/webhooks composes them. */
import type { Client } from '@temporalio/client';
import type { Tx } from '../db/pool';
import type { AfterCommit } from '../moneyin/afterCommit';
import type { MoneyInDeps } from '../moneyin/deps';
import type { WebhookEnvelope } from './envelope';

export type { WebhookEnvelope };

export interface WebhookContext extends MoneyInDeps {
  /** For effects that signal workflows after the commit (absent where no Temporal client is wired). */
  temporal?: Client;
}

export type WebhookEffect = (tx: Tx, envelope: WebhookEnvelope, ctx: WebhookContext) => Promise<AfterCommit[]>;
