/** What the money-in use cases need, built once by the API (and by the worker for the sweep). */
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import type { PayoutStarter } from '../payouts/starter';

export interface MoneyInDeps {
  db: Db;
  gateway: Gateway;
  config: Config;
  payoutStarter: PayoutStarter;
}
