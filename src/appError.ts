/** The one application error type: a deliberate HTTP status, a stable code and a message for the
 * caller. Any capability may throw it; src/api/errors.ts turns it into the error envelope. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}
