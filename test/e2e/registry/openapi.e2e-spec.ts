import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import type { ApiResponse } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { ADMIN, createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';

/**
 * The registry's OpenAPI document describes real response schemas, so a client generated from it is typed.
 * The document comes from decorators only, never from the database, so SQLite is enough: the MySQL run
 * would build the same document.
 */

interface SchemaObject {
  $ref?: string;
  type?: string;
  format?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, SchemaObject>;
  additionalProperties?: boolean | SchemaObject;
  items?: SchemaObject;
  allOf?: SchemaObject[];
  oneOf?: SchemaObject[];
}

interface ResponseObject {
  description?: string;
  content?: Record<string, { schema?: SchemaObject }>;
}

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  responses: Record<string, ResponseObject>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operationsOf(document: OpenAPI3): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, { operationId?: string; responses?: Record<string, ResponseObject> }>)[
        method
      ];
      if (operation)
        operations.push({ method, path, operationId: operation.operationId, responses: operation.responses ?? {} });
    }
  }
  return operations;
}

function resolve(document: OpenAPI3, schema: SchemaObject): SchemaObject {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = (document.components?.schemas as Record<string, SchemaObject> | undefined)?.[name];
  if (!target) throw new Error(`unresolved ${schema.$ref}`);
  return resolve(document, target);
}

/** Why a response schema says nothing a client can use, or null when it describes the body. */
function vagueness(document: OpenAPI3, schema: SchemaObject | undefined, mediaType: string): string | null {
  if (!schema) return 'no schema';
  const resolved = resolve(document, schema);
  if (mediaType !== 'application/json')
    return resolved.type === 'string' && resolved.format === 'binary' ? null : `a ${mediaType} body that is not binary`;
  if (resolved.type === 'array') {
    if (!resolved.items) return 'an array without items';
    const items = resolve(document, resolved.items);
    return items.type && items.type !== 'object' ? null : vagueness(document, resolved.items, mediaType);
  }
  if (resolved.allOf || resolved.oneOf) {
    const parts = [...(resolved.allOf ?? []), ...(resolved.oneOf ?? [])];
    return parts.every((part) => vagueness(document, part, mediaType) === null)
      ? null
      : 'a composition with a vague part';
  }
  if (resolved.type !== 'object' && !resolved.properties) return `type ${resolved.type ?? 'missing'}`;
  if (!resolved.properties || Object.keys(resolved.properties).length === 0) return 'an object without properties';
  return null;
}

/** Where a JSON value departs from its schema: undocumented or missing fields, wrong primitive types. */
function departures(document: OpenAPI3, schema: SchemaObject, value: unknown, at: string): string[] {
  if (schema.allOf?.length === 1)
    return value === null && schema.nullable ? [] : departures(document, schema.allOf[0], value, at);
  const resolved = resolve(document, schema);
  if (value === null) return schema.nullable || resolved.nullable ? [] : [`${at} is null`];
  if (resolved.type === 'array') {
    if (!Array.isArray(value)) return [`${at} is not an array`];
    return value.flatMap((item, index) => departures(document, resolved.items ?? {}, item, `${at}[${index}]`));
  }
  if (resolved.properties || resolved.type === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${at} is not an object`];
    const record = value as Record<string, unknown>;
    const properties = resolved.properties ?? {};
    const problems = (resolved.required ?? [])
      .filter((key) => !(key in record))
      .map((key) => `${at}.${key} is missing`);
    for (const [key, field] of Object.entries(record)) {
      const fieldSchema =
        properties[key] ??
        (typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : undefined);
      if (fieldSchema) problems.push(...departures(document, fieldSchema, field, `${at}.${key}`));
      else if (resolved.additionalProperties !== true) problems.push(`${at}.${key} is not documented`);
    }
    return problems;
  }
  const expected = resolved.type === 'integer' ? 'number' : resolved.type;
  return expected && typeof value !== expected ? [`${at} is ${typeof value}, documented ${resolved.type}`] : [];
}

function successStatuses(operation: Operation): string[] {
  return Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
}

/** Success bodies a client reads: not HEAD, not 204. */
function bodies(operations: Operation[]) {
  return operations.flatMap((operation) =>
    successStatuses(operation)
      .filter((status) => operation.method !== 'head' && status !== '204')
      .flatMap((status) =>
        Object.entries(operation.responses[status].content ?? {}).map(([mediaType, media]) => ({
          operation,
          status,
          mediaType,
          schema: media.schema,
        })),
      ),
  );
}

describe('registry OpenAPI document', () => {
  let registry: RegistryUnderTest;
  let document: OpenAPI3;
  let operations: Operation[];

  beforeAll(async () => {
    registry = await startRegistry(backends().find((backend) => backend.name === 'sqlite') ?? backends()[0]);
    const response = await fetch(`${registry.baseUrl}/api/docs-json`);
    expect(response.status).toBe(200);
    document = (await response.json()) as OpenAPI3;
    operations = operationsOf(document);
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('gives every operation a unique, stable operationId', () => {
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    const byRoute = Object.fromEntries(
      operations.map((operation) => [`${operation.method.toUpperCase()} ${operation.path}`, operation.operationId]),
    );
    expect(byRoute).toEqual(EXPECTED_OPERATION_IDS);
  });

  it('documents a success response for every operation', () => {
    const missing = operations
      .filter((operation) => successStatuses(operation).length === 0)
      .map((operation) => operation.operationId);
    expect(missing).toEqual([]);
    const withoutBody = operations
      .filter((operation) => operation.method !== 'head')
      .flatMap((operation) =>
        successStatuses(operation)
          .filter((status) => status !== '204' && !operation.responses[status].content)
          .map((status) => `${operation.operationId} ${status}`),
      );
    expect(withoutBody).toEqual([]);
  });

  it('describes every success body with a schema that has properties (or is a file)', () => {
    const vague = bodies(operations)
      .map(({ operation, status, mediaType, schema }) => ({
        at: `${operation.operationId} ${status} ${mediaType}`,
        why: vagueness(document, schema, mediaType),
      }))
      .filter(({ why }) => why !== null);
    expect(vague).toEqual([]);
  });

  it('describes every error response with the error body', () => {
    const untyped = operations.flatMap((operation) =>
      Object.entries(operation.responses)
        .filter(([status]) => /^[45]\d\d$/.test(status))
        .filter(([status, response]) => {
          const schema = response.content?.['application/json']?.schema;
          // A failed readiness probe answers with its own body, which names the failed dependencies.
          const expected =
            operation.operationId?.startsWith('health_ready') && status === '503'
              ? 'ReadinessFailureDto'
              : 'ErrorResponseDto';
          return schema?.$ref !== `#/components/schemas/${expected}`;
        })
        .map(([status]) => `${operation.operationId} ${status}`),
    );
    expect(untyped).toEqual([]);
  });

  it('documents 400 for a malformed multipart body and 413 on every upload route', () => {
    const uploads = operations.filter(
      (operation) =>
        operation.method === 'post' &&
        [
          '/api/v1/packages',
          '/api/v1/packages/{name}/versions',
          '/api/v1/packages/{name}/upload',
          '/api/v1/artifacts/{name}/builds',
        ].includes(operation.path),
    );
    expect(uploads).toHaveLength(4);
    const undocumented = uploads.flatMap((operation) =>
      ['400', '413'].filter((status) => !operation.responses[status]).map((status) => `${operation.path} ${status}`),
    );
    expect(undocumented).toEqual([]);
  });

  it('answers with exactly the documented fields', async () => {
    const { client, publisherName } = await publisherFactory(registry);
    const name = `typed-${Date.now().toString(36)}`;
    await createPackage(client, name);
    const upload = await uploadVersion(client, name, '1.0.0');
    await uploadVersion(client, name, '1.1.0');
    const admin = registry.as(ADMIN);
    const calls: [string, Promise<ApiResponse>][] = [
      ['package_versions_upload', Promise.resolve(upload)],
      ['packages_create', createPackage(client, `${name}-b`).then((body) => ({ status: 201, body }) as ApiResponse)],
      ['packages_list', registry.api.get('/api/v1/packages')],
      ['packages_detail', registry.api.get(`/api/v1/packages/${name}`)],
      ['packages_detail', registry.api.get('/api/v1/packages/no-such-package')],
      [
        'package_versions_version',
        registry.api.get(`/api/v1/packages/${name}/versions/1.0.0`, { Accept: 'application/json' }),
      ],
      ['package_versions_download_url', registry.api.get(`/api/v1/packages/${name}/versions/1.0.0/download`)],
      ['package_versions_yank', client.post(`/api/v1/packages/${name}/versions/1.0.0/yank`, { reason: 'typed' })],
      ['search_find', registry.api.get(`/api/v1/search?q=${name}`)],
      ['latest_versions_get', registry.api.get(`/api/v1/versions?names=${name}`)],
      ['latest_versions_get', registry.api.get('/api/v1/versions')],
      ['resolve_resolve', registry.api.post('/api/v1/resolve', { requirements: [name] })],
      ['resolve_check_by_query', registry.api.get(`/api/v1/resolve/check?package=${name}&toolbox_version=1.0.0`)],
      ['registry_auth_me', client.get('/api/v1/auth/me')],
      ['registry_auth_publisher', client.get('/api/v1/auth/publisher')],
      ['publishers_list', registry.api.get('/api/v1/publishers')],
      [
        'publishers_submit',
        client.post('/api/v1/publishers/verify', { method: 'github', data: { username: 'octocat' } }),
      ],
      ['publishers_detail', client.get(`/api/v1/publishers/${publisherName}`)],
      ['publisher_admin_pending', admin.get('/api/v1/packages/admin/pending')],
      ['publisher_admin_verify', admin.post(`/api/v1/packages/admin/${publisherName}/verify`, { notes: 'typed' })],
      ['audit_list', admin.get('/api/v1/admin/audit')],
      ['artifacts_list', registry.api.get('/api/v1/artifacts')],
      ['diff_info', registry.api.get(`/api/v1/packages/${name}/diff/1.0.0/1.1.0`)],
      ['health_health', registry.api.get('/health')],
      ['health_ready', registry.api.get('/ready')],
    ];
    const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
    const problems: string[] = [];
    for (const [id, pending] of calls) {
      const { status, body } = await pending;
      const schema = byId.get(id)?.responses[String(status)]?.content?.['application/json']?.schema;
      if (!schema) problems.push(`${id}: status ${status} is not documented`);
      else problems.push(...departures(document, schema, body, `${id} ${status}`));
    }
    expect(problems).toEqual([]);
  });

  it('generates a client that type-checks, with no unknown or any success body', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tb-openapi-'));
    try {
      await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(document)));
      await writeFile(
        join(dir, 'client.ts'),
        clientSource(
          bodies(operations).map(({ operation, status, mediaType }) => ({
            id: operation.operationId!,
            status,
            mediaType,
          })),
        ),
      );
      const program = ts.createProgram([join(dir, 'client.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        types: [],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
        const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
        if (!diagnostic.file || diagnostic.start === undefined) return text;
        const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        return `${diagnostic.file.fileName.slice(dir.length + 1)}:${line + 1} ${diagnostic.file.text.split('\n')[line].trim()} — ${text}`;
      });
      expect(problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A client file over the generated types: one compile-time assertion per success body (neither `any`,
 * `unknown` nor `never`; an object names its fields), and a few reads a real client makes, with
 * `@ts-expect-error` on fields that do not exist (unused if a body degrades to `any`).
 */
function clientSource(checks: { id: string; status: string; mediaType: string }[]): string {
  const assertions = checks.map(
    ({ id, status, mediaType }, index) =>
      `type Check${index} = Expect<Described<Body<'${id}', ${status}, '${mediaType}'>>>; // ${id} ${status} ${mediaType}`,
  );
  return `import type { components, operations } from './schema';

type IsAny<T> = 0 extends 1 & T ? true : false;
type IsUnknown<T> = IsAny<T> extends true ? false : unknown extends T ? true : false;
type Typed<T> = IsAny<T> extends true ? false : IsUnknown<T> extends true ? false : [T] extends [never] ? false : true;
type Described<T> = Typed<T> extends false
  ? false
  : T extends readonly unknown[]
    ? Typed<T[number]>
    : T extends object
      ? string extends keyof T
        ? false
        : true
      : true;
type Expect<T extends true> = T;
type Body<Id extends keyof operations, Status extends number, Media extends string> = operations[Id]['responses'] extends infer R
  ? Status extends keyof R
    ? R[Status] extends { content: infer C }
      ? Media extends keyof C
        ? C[Media]
        : never
      : never
    : never
  : never;

${assertions.join('\n')}

type PackageList = Body<'packages_list', 200, 'application/json'>;
type Search = Body<'search_find', 200, 'application/json'>;
type Resolution = Body<'resolve_resolve', 200, 'application/json'>;
type Pending = Body<'publisher_admin_pending', 200, 'application/json'>;
type Failure = components['schemas']['ErrorResponseDto'];

export function names(list: PackageList): string[] {
  return list.packages.map((item) => item.name);
}

export function latestOf(list: PackageList): (string | null)[] {
  return list.packages.map((item) => item.latest_version);
}

export function verified(search: Search): boolean[] {
  return search.results.map((hit) => hit.verified && (hit.publisher?.verified ?? false));
}

export function checksums(resolution: Resolution): string[] {
  return Object.values(resolution.resolved).map((entry) => entry.checksum_sha256);
}

export function requestIds(pending: Pending): string[] {
  return pending.publishers.map((item) => item.request_id);
}

export function describeFailure(failure: Failure): string {
  return \`\${failure.code}: \${failure.message} (\${failure.request_id})\`;
}

export function wrongField(list: PackageList): unknown {
  // @ts-expect-error a package list has no "items"
  return list.items;
}

export function wrongType(search: Search): string {
  // @ts-expect-error total is a number
  return search.total;
}

export type AllChecks = [${checks.map((_, index) => `Check${index}`).join(', ')}];
`;
}

/**
 * `<controller>_<method>` (src/common/openapi.ts). Generated clients name their calls after these, so a
 * renamed controller method fails here instead of silently renaming a client function.
 */
const EXPECTED_OPERATION_IDS: Record<string, string> = {
  'DELETE /api/v1/packages/{name}': 'packages_remove',
  'GET /api/v1/admin/audit': 'audit_list',
  'GET /api/v1/artifacts': 'artifacts_list',
  'GET /api/v1/artifacts/{name}': 'artifacts_detail',
  'GET /api/v1/artifacts/{name}/latest': 'artifacts_latest',
  'GET /api/v1/artifacts/{name}/versions/{version}/download': 'artifacts_download_url',
  'GET /api/v1/artifacts/{name}/{version}': 'artifacts_download',
  'GET /api/v1/auth/me': 'registry_auth_me',
  'GET /api/v1/auth/publisher': 'registry_auth_publisher',
  'GET /api/v1/files/{key}': 'files_download',
  'GET /api/v1/health': 'health_health_1',
  'GET /api/v1/packages': 'packages_list',
  'GET /api/v1/packages/admin/pending': 'publisher_admin_pending',
  'GET /api/v1/packages/{name}': 'packages_detail',
  'GET /api/v1/packages/{name}/diff/{from}/{to}': 'diff_info',
  'GET /api/v1/packages/{name}/diff/{from}/{to}/download': 'diff_download',
  'GET /api/v1/packages/{name}/versions/{version}': 'package_versions_version',
  'GET /api/v1/packages/{name}/versions/{version}/download': 'package_versions_download_url',
  'GET /api/v1/publishers': 'publishers_list',
  'GET /api/v1/publishers/admin/pending': 'publisher_admin_pending_1',
  'GET /api/v1/publishers/{name}': 'publishers_detail',
  'GET /api/v1/ready': 'health_ready_1',
  'GET /api/v1/resolve/check': 'resolve_check_by_query',
  'GET /api/v1/search': 'search_find',
  'GET /api/v1/search/suggest': 'search_suggest',
  'GET /api/v1/search/suggestions': 'search_suggest_1',
  'GET /api/v1/versions': 'latest_versions_get',
  'GET /health': 'health_health',
  'GET /ready': 'health_ready',
  'HEAD /api/v1/health': 'health_health_head_1',
  'HEAD /health': 'health_health_head',
  'PATCH /api/v1/packages/{name}': 'packages_update',
  'POST /api/v1/artifacts': 'artifacts_create',
  'POST /api/v1/artifacts/{name}/builds': 'artifacts_upload',
  'POST /api/v1/auth/register-publisher': 'registry_auth_register_publisher',
  'POST /api/v1/packages': 'packages_create',
  'POST /api/v1/packages/admin/{publisher_id}/reject': 'publisher_admin_reject',
  'POST /api/v1/packages/admin/{publisher_id}/revoke': 'publisher_admin_revoke',
  'POST /api/v1/packages/admin/{publisher_id}/suspend': 'publisher_admin_suspend',
  'POST /api/v1/packages/admin/{publisher_id}/unsuspend': 'publisher_admin_unsuspend',
  'POST /api/v1/packages/admin/{publisher_id}/verify': 'publisher_admin_verify',
  'POST /api/v1/packages/{name}/diff/create': 'diff_create',
  'POST /api/v1/packages/{name}/upload': 'package_versions_upload',
  'POST /api/v1/packages/{name}/versions': 'package_versions_upload_1',
  'POST /api/v1/packages/{name}/versions/{version}/unyank': 'package_versions_unyank',
  'POST /api/v1/packages/{name}/versions/{version}/yank': 'package_versions_yank',
  'POST /api/v1/publishers/admin/{publisher_id}/reject': 'publisher_admin_reject_1',
  'POST /api/v1/publishers/admin/{publisher_id}/revoke': 'publisher_admin_revoke_1',
  'POST /api/v1/publishers/admin/{publisher_id}/suspend': 'publisher_admin_suspend_1',
  'POST /api/v1/publishers/admin/{publisher_id}/unsuspend': 'publisher_admin_unsuspend_1',
  'POST /api/v1/publishers/admin/{publisher_id}/verify': 'publisher_admin_verify_1',
  'POST /api/v1/publishers/verify': 'publishers_submit',
  'POST /api/v1/resolve': 'resolve_resolve',
  'POST /api/v1/resolve/check': 'resolve_check_by_body',
  'POST /api/v1/versions': 'latest_versions_post',
};
