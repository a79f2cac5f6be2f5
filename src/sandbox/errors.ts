/** Razorpay's error answers: `{ error: { code, description, source, step, reason, metadata, field } }`.
 * Strings are copied from the reference (../shared/razorpay-reference.md §1.3, §1.5, §3). */
export class RazorpayApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    readonly description: string,
    readonly details: { field?: string | null; source?: string; step?: string; reason?: string } = {},
  ) {
    super(`${httpStatus} ${code}: ${description}`);
  }

  body(): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        description: this.description,
        source: this.details.source ?? 'NA',
        step: this.details.step ?? 'NA',
        reason: this.details.reason ?? 'NA',
        metadata: {},
        field: this.details.field ?? null,
      },
    };
  }
}

/** A validation failure: 400 BAD_REQUEST_ERROR, business / payment_initiation / input_validation_failed. */
export function badRequest(description: string, field?: string): RazorpayApiError {
  return new RazorpayApiError(400, 'BAD_REQUEST_ERROR', description, { field: field ?? null, source: 'business', step: 'payment_initiation', reason: 'input_validation_failed' });
}

/** Razorpay answers an unknown id with 400, not 404. */
export function idNotFound(): RazorpayApiError {
  return new RazorpayApiError(400, 'BAD_REQUEST_ERROR', 'The id provided does not exist', { field: 'id' });
}

export function invalidApiKey(): RazorpayApiError {
  return new RazorpayApiError(401, 'BAD_REQUEST_ERROR', 'The api key provided is invalid');
}

export function serverError(): RazorpayApiError {
  return new RazorpayApiError(500, 'SERVER_ERROR', 'The server encountered an error. The incident has been reported to admins.');
}

/** The body of a 429 is unconfirmed; this uses the API-SRC code and the documented description. */
export function rateLimited(): RazorpayApiError {
  return new RazorpayApiError(429, 'BAD_REQUEST_RATE_LIMIT_EXCEEDED', 'Request failed. Please try after sometime.');
}

/** A transfer-time rejection (API-SRC PublicErrorDescription / ErrorCodeMapping). */
export function transferRejection(code: TransferRejectionCode): RazorpayApiError {
  const { description, reason, field } = TRANSFER_REJECTIONS[code];
  return new RazorpayApiError(400, code, description, { field, reason, source: 'business', step: 'transfer_processing' });
}

export const TRANSFER_REJECTIONS = {
  BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID: { description: 'Account ID provided for transfer is invalid', reason: 'invalid_account_id', field: 'account' },
  BAD_REQUEST_TRANSFER_ACCOUNT_NOT_ACTIVATED: { description: 'The account needs to be activated by Razorpay before you can make transfers in live mode', reason: 'account_not_activated', field: 'account' },
  BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT: { description: 'Transfer cannot be made to a suspended linked account', reason: 'linked_account_suspended', field: 'account' },
  BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE: { description: 'Account does not have sufficient balance to carry out transfer operation', reason: 'insufficient_account_balance', field: 'amount' },
} as const;
export type TransferRejectionCode = keyof typeof TRANSFER_REJECTIONS;
