/** The window a recon run covers, parsed at the boundary (API, CLI, console). Apart from
 * contracts/recon.ts so that the workflow bundle does not evaluate zod for every workflow run. */
import { z } from 'zod';
import { isoDateSchema } from '../domain/schemas';

// A calendar date, not only its shape: 2026-02-30 is refused with a 400 before any run starts.

export const reconWindowSchema = z.object({
  from: isoDateSchema,
  to: isoDateSchema,
  /** The IST day to judge due dates against; the worker's today when absent. */
  asOf: isoDateSchema.optional(),
}).refine((w) => w.from <= w.to, { message: 'from must not be after to', path: ['to'] })
  .refine((w) => Date.parse(`${w.to}T00:00:00Z`) - Date.parse(`${w.from}T00:00:00Z`) <= 31 * 86_400_000, { message: 'a run covers at most 32 days', path: ['to'] });
export type ReconWindow = z.infer<typeof reconWindowSchema>;
