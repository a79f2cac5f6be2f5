/** What the API's routes are given; the entry point (or a test) builds it once. Its own module so
 * routes, the console and the metrics need not import the server that registers them. */
import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import type { PayoutStarter } from '../payouts/starter';
import type { ReconStarter } from '../recon/temporal';

export interface ApiDeps {
  config: Config;
  db: Db;
  /** Finance: starts recon runs and reads their progress (absent: the run endpoint answers 503). */
  reconStarter?: ReconStarter;
  /** Signals payout runs from the ops routes (absent: decisions are committed and runs re-read them). */
  temporal?: TemporalClient;
  /** Money in: the Razorpay adapter (default: built from config) and the payout seam (default: leave for the sweep). */
  gateway?: Gateway;
  payoutStarter?: PayoutStarter;
}
