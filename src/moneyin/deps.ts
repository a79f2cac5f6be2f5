/** What the money-in use cases need, built once by the API (and by the worker for the sweep). */
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import type { PayoutStarter } from '../payouts/starter';
import type { ApiProviderBudget } from './providerBudget';

export interface MoneyInDeps {
  db: Db;
  gateway: Gateway;
  config: Config;
  payoutStarter: PayoutStarter;
  /** The API's per-process Razorpay budget for order creates; absent where no customer waits (the worker's sweep). */
  providerBudget?: ApiProviderBudget;
}
