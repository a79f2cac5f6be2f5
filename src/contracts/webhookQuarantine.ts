/** What the webhook quarantine's routes take (the API's and the console's): the list filter, a row's
 * id, and an acknowledgement's note. */
import { z } from 'zod';
import { SET_ASIDE_REASONS } from '../webhooks/setAsideReason';

export const quarantineQuery = z.object({
  reason: z.enum(SET_ASIDE_REASONS).optional(),
  show: z.enum(['open', 'acknowledged', 'all']).default('all'),
  beforeId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
}).strict();
export const quarantineIdParams = z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });
export const acknowledgeBody = z.object({ note: z.string().trim().min(3, 'say in at least 3 characters what you concluded').max(500) });
