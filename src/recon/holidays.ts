/** The configured bank-holiday list as a set of IST dates. */
import type { Config } from '../config/config';

export function bankHolidays(config: Pick<Config, 'BANK_HOLIDAYS'>): ReadonlySet<string> {
  return new Set(config.BANK_HOLIDAYS);
}
