/** Razorpay-style ids: a prefix and 14 alphanumerics (e.g. `trf_JqpKevElHShZkw`). */
import { randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

export type IdPrefix = 'pay' | 'order' | 'trf' | 'rfnd' | 'rvrsl' | 'setl' | 'acc' | 'adj' | 'evt' | 'card';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomAlphanumeric(14)}`;
}

export const ACCOUNT_ID = /^acc_[A-Za-z0-9]{14}$/;
