/** Domain values as they cross a boundary (API bodies, query strings, gateway answers, CSV cells),
 * parsed with zod. Apart from money.ts and calendar.ts so that the workflow bundle, which imports
 * those, does not evaluate zod for every workflow run. */
import { z } from 'zod';
import { ISO_DATE, isIsoDate } from './calendar';
import { FORMULA_START_MESSAGE, startsLikeFormula } from './formulaText';

/** Integer paise. */
export const paiseSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** An IST calendar day: YYYY-MM-DD that exists. */
export const isoDateSchema = z.string().regex(ISO_DATE, 'expected an IST date YYYY-MM-DD').refine(isIsoDate, 'no such date');

/** A Razorpay transfer id as the provider makes them: `trf_` and 14 letters or digits. */
export const transferIdSchema = z.string().trim().regex(/^trf_[A-Za-z0-9]{14}$/, 'a Razorpay transfer id: trf_ and 14 letters or digits');

/** An id or a name that a finance CSV may carry (bank file, statement, exceptions): refused when it
 * starts like a spreadsheet formula, naming the field in the 400's issues. */
export const csvSafe = <T extends z.ZodType<string>>(schema: T) => schema.refine((value) => !startsLikeFormula(value), FORMULA_START_MESSAGE);
