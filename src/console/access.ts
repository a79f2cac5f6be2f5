/** How a console route says who may open it, and what its handlers read: the session, the page. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/deps';
import { documented } from '../api/openapi';
import { publicRoute, type RouteAuth } from '../auth/routeAuth';
import type { PlainRole } from '../auth/roles';
import type { ConsoleSession } from './session';

/** Who may open a console page: anyone, any signed-in key, or a key with one of the roles. */
export type ConsoleAccess = 'anyone' | 'signed-in' | PlainRole | readonly [PlainRole, ...PlainRole[]];

/** The roles a page asks for (any one lets the key in); none for 'anyone' and 'signed-in'. */
export const rolesOf = (access: ConsoleAccess): readonly PlainRole[] =>
  access === 'anyone' || access === 'signed-in' ? [] : typeof access === 'string' ? [access] : access;

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: ConsoleAccess;
  }
  interface FastifyRequest {
    consoleSession?: ConsoleSession;
  }
}

/** Route options for a console route: its access, and a summary for the OpenAPI document. */
export function consoleRoute(access: ConsoleAccess, summary: string): { config: { auth: RouteAuth; docs: { summary: string; tags: string[] }; console: ConsoleAccess } } {
  const { config } = documented(publicRoute('console-session'), { summary, tags: ['console'] });
  return { config: { ...config, docs: { summary, tags: ['console'] }, console: access } };
}

/** The signed-in session of a route that required one (the hook guarantees it). */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw new Error('sessionOf called on a console route open to anyone');
  return request.consoleSession;
}

export const wantsHtml = (request: FastifyRequest): boolean => (request.headers.accept ?? '').includes('text/html');

export type ConsoleDeps = Pick<ApiDeps, 'config' | 'db' | 'reconStarter' | 'temporal' | 'gateway'>;

export function sendPage(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}
