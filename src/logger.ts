/** Structured logs (pino). Production: JSON lines with ISO times. `LOG_FORMAT=pretty` (npm run dev
 * sets it) prints the same records as human lines, outside production only (logFormatProblems;
 * loadConfig then refuses to start). Provider errors are logged whole under `err` with pino's
 * serializer, because the Razorpay SDK rejects with plain objects that have no `.message`. */
import pino from 'pino';
import { logFormatProblems } from './config/config';

const options: pino.LoggerOptions = {
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'payouts' },
  timestamp: pino.stdTimeFunctions.isoTime,
  serializers: { err: pino.stdSerializers.errWithCause },
};

function prettyStream(): pino.DestinationStream | undefined {
  if (process.env.LOG_FORMAT !== 'pretty' || logFormatProblems(process.env).length > 0) return undefined;
  try {
    // A dev dependency: absent from the production image, where logs stay JSON.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as (opts: Record<string, unknown>) => pino.DestinationStream;
    // A provider error stays whole but on one line, not a block per field.
    return pretty({
      colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service', singleLine: true, sync: true,
      customPrettifiers: { err: (value: unknown) => JSON.stringify(value) },
    });
  } catch {
    return undefined;
  }
}

const stream = prettyStream();
export const logger = stream ? pino(options, stream) : pino(options);

export type Logger = pino.Logger;
