/** A vendor's bank details as a bank's bulk-payment file accepts them (pure): validation of what an
 * admin enters, and the masked form that is all anyone is ever shown of the account number. */
import { z } from 'zod';
import { csvSafe } from '../domain/schemas';

export const IFSC = /^[A-Z]{4}0[A-Z0-9]{6}$/;
const ACCOUNT_NUMBER = /^\d{9,18}$/;
// What Indian banks accept in a NEFT/RTGS beneficiary name.
const BENEFICIARY_NAME = /^[A-Za-z0-9 .&'-]{1,100}$/;

export const bankDetailsSchema = z.object({
  accountNumber: z.string().trim().regex(ACCOUNT_NUMBER, 'an account number is 9 to 18 digits, nothing else'),
  ifsc: z.string().trim().transform((s) => s.toUpperCase())
    .pipe(z.string().regex(IFSC, 'an IFSC is 4 letters, a 0, then 6 letters or digits (e.g. HDFC0001234)')),
  beneficiaryName: z.string().transform((s) => s.trim().replace(/\s+/g, ' '))
    .pipe(csvSafe(z.string().regex(BENEFICIARY_NAME, 'a beneficiary name is 1 to 100 letters, digits, spaces and . & \' -'))),
}).strict();

export type BankDetails = z.output<typeof bankDetailsSchema>;

export interface FieldProblem { field: string; message: string }

export type BankDetailsValidation = { ok: true; details: BankDetails } | { ok: false; problems: FieldProblem[] };

/** Every problem, each naming its field; the input itself is never echoed (it may be an account number). */
export function validateBankDetails(input: unknown): BankDetailsValidation {
  const parsed = bankDetailsSchema.safeParse(input);
  if (parsed.success) return { ok: true, details: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((i) => ({
      field: i.path.length > 0 ? i.path.join('.') : i.code === 'unrecognized_keys' ? i.keys.join(', ') : 'body',
      message: i.code === 'invalid_type' ? `required, a string (${i.message})` : i.message,
    })),
  };
}

/** `XXXXXX` and the last four digits, whatever the length: the mask does not tell the length either. */
export function maskAccountNumber(accountNumber: string): string {
  if (!ACCOUNT_NUMBER.test(accountNumber)) throw new RangeError('maskAccountNumber expects a validated account number');
  return `XXXXXX${accountNumber.slice(-4)}`;
}
