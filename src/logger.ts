/** Structured logs (pino). Provider errors are logged whole under `err` with pino's serializer,
 * because the Razorpay SDK rejects with plain objects that have no `.message`. */
import pino from 'pino';

export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'payouts' },
  serializers: { err: pino.stdSerializers.errWithCause },
});

export type Logger = pino.Logger;
