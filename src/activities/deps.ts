/** What every activity factory is given; the worker (or a test) builds it once. Its own module so
 * the factories need not import the entry file (index.ts) that assembles them. */
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import type { PayoutStarter } from '../payouts/starter';

export interface ActivityDeps {
  db: Db;
  gateway: Gateway;
  config: Config;
  /** Injected so tests can move time; defaults to the wall clock. */
  now?: () => Date;
  /** Money in: asks the payout layer to start after an order becomes paid (default: leave it for the sweep). */
  payoutStarter?: PayoutStarter;
}
