/** Bearer-token guards for the admin/ops and finance routes (timing-safe comparison). */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Returns a preHandler that accepts `Authorization: Bearer <token>` for one of `tokens`. */
export function requireToken(...tokens: string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const presented = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!presented || !tokens.some((t) => sameSecret(presented, t))) {
      throw new AppError(401, 'unauthorized', 'a valid bearer token is required');
    }
  };
}

/** Who did it, for audit rows: `X-Actor` when given, else the role of the token. */
export function actorOf(request: FastifyRequest, role: string): string {
  const actor = request.headers['x-actor'];
  return typeof actor === 'string' && actor.trim() ? `${role}:${actor.trim().slice(0, 100)}` : role;
}
