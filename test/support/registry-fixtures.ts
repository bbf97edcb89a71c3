import { zipBuilder } from '../fixtures/zip-builder.js';
import type { ApiClient } from './api-client.js';
import type { RegistryUnderTest, TestUser } from './registry-under-test.js';

let counter = 0;

/** A user with a registered publisher, through the public API. */
export async function publisherFactory(
  registry: RegistryUnderTest,
  name?: string,
): Promise<{ user: TestUser; client: ApiClient; publisherName: string }> {
  counter += 1;
  const id = `user-${Date.now().toString(36)}-${counter}`;
  const user: TestUser = { id, username: `dev${counter}`, email: `dev${counter}@example.com` };
  const client = registry.as(user);
  const publisherName = name ?? `pub-${id}`;
  const response = await client.post('/api/v1/auth/register-publisher', {
    name: publisherName,
    display_name: `Publisher ${counter}`,
  });
  if (response.status !== 201) throw new Error(`publisherFactory: ${response.status} ${JSON.stringify(response.body)}`);
  return { user, client, publisherName };
}

export function samplePackageZip(marker = 'v1'): Buffer {
  return zipBuilder()
    .add('tb-mod.json', JSON.stringify({ name: 'sample', marker }))
    .add('src/index.js', `export const marker = '${marker}';\n`)
    .build();
}

export async function createPackage(client: ApiClient, name: string, extra: Record<string, unknown> = {}) {
  const response = await client.post('/api/v1/packages', {
    name,
    display_name: name,
    description: `The ${name} package`,
    package_type: 'mod',
    ...extra,
  });
  if (response.status !== 201) throw new Error(`createPackage: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export async function uploadVersion(
  client: ApiClient,
  name: string,
  version: string,
  fields: Record<string, string> = {},
  zip = samplePackageZip(version),
) {
  return client.postForm(`/api/v1/packages/${name}/upload`, {
    version,
    changelog: `release ${version}`,
    ...fields,
    file: { filename: `${name}.zip`, content: zip },
  });
}

export const ADMIN: TestUser = { id: 'admin-1', username: 'root', admin: true };
