/** The OpenAPI 3.1 document, from one source: each route's declaration (its auth, and the zod
 * schemas its handler parses, attached with `documented`). Served at /openapi.json and readable at
 * /docs (Swagger UI). A route without docs still appears, marked undocumented, so the test that
 * every route is documented can fail. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { z, type ZodType } from 'zod';
import { declaredRoutes, publicRoute, type RouteAuth } from '../auth/routeAuth';

export interface RouteDocs {
  summary: string;
  description?: string;
  tags?: string[];
  params?: ZodType;
  querystring?: ZodType;
  body?: ZodType;
  /** The body's media types (default application/json). */
  bodyTypes?: string[];
  /** The main success status (default 200). */
  success?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    docs?: RouteDocs;
  }
}

/** Route options with their auth and their documentation: `documented(requires('ops'), { … })`. */
export function documented(options: { config: { auth: RouteAuth } }, docs: RouteDocs): { config: { auth: RouteAuth; docs: RouteDocs } } {
  return { config: { ...options.config, docs } };
}

type JsonSchema = Record<string, unknown>;
const jsonSchema = (schema: ZodType): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
};

function parameters(schema: ZodType | undefined, where: 'path' | 'query', names: string[] = []): JsonSchema[] {
  const props = schema ? ((jsonSchema(schema).properties ?? {}) as Record<string, JsonSchema>) : {};
  const required = new Set(schema ? ((jsonSchema(schema).required ?? []) as string[]) : []);
  const all = new Set([...names, ...Object.keys(props)]);
  return [...all].map((name) => ({ name, in: where, required: where === 'path' || required.has(name), schema: props[name] ?? { type: 'string' } }));
}

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} } } },
};

export function buildOpenApiDocument(app: FastifyInstance, info: { version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of declaredRoutes(app)) {
    if (route.url.startsWith('/docs')) continue;
    const docs = route.config.docs;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const pathNames = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
    const auth = route.auth;
    const isPublic = 'public' in auth;
    const responses: Record<string, JsonSchema> = {
      [String(docs?.success ?? 200)]: { description: 'success' },
      400: { description: 'bad input (nothing changed)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    if (!isPublic) {
      responses[401] = { description: 'no API key, or an unknown or revoked one', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      responses[403] = { description: `the key lacks the role: ${auth.roles.join(' or ')}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    const operation: JsonSchema = {
      operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: docs?.summary ?? 'undocumented',
      ...(docs?.description ? { description: docs.description } : {}),
      tags: docs?.tags ?? [route.url.split('/')[1] ?? 'api'],
      security: isPublic ? [] : [{ apiKey: [] }],
      [isPublic ? 'x-public' : 'x-roles']: isPublic ? auth.public : auth.roles,
      parameters: [...parameters(docs?.params, 'path', pathNames), ...parameters(docs?.querystring, 'query')],
      responses,
    };
    if (docs?.body) {
      const schema = jsonSchema(docs.body);
      operation.requestBody = { required: true, content: Object.fromEntries((docs.bodyTypes ?? ['application/json']).map((t) => [t, { schema: t === 'application/json' ? schema : { type: 'string' } }])) };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payouts API',
      version: info.version,
      description: 'Orders, wallets and webhooks in; vendor payouts out; ops decisions; reconciliation for finance. Every route states the role its API key needs (x-roles) or why it is public (x-public). Errors: `{ error: { code, message, details? } }`.',
    },
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key `pk_…` (npm run keys -- mint …)' } },
      schemas: { Error: ERROR_ENVELOPE },
    },
    paths,
  };
}

/** GET /openapi.json and the Swagger UI at /docs on `app`, documenting the routes of `documents`
 * (default: `app` itself; the API's admin port documents the public API). Register last: the
 * document is built when `documents` is ready, from every route registered by then. */
export async function openApiRoutes(app: FastifyInstance, info: { version: string; documents?: FastifyInstance }): Promise<void> {
  const documents = info.documents ?? app;
  const document: JsonSchema = {};
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', documented(publicRoute('docs'), { summary: 'This document (OpenAPI 3.1)', tags: ['docs'] }), async () => document);
  documents.addHook('onReady', async () => { Object.assign(document, buildOpenApiDocument(documents, info)); });
}
