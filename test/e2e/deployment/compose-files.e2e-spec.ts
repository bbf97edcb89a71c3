import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { YAML11_SCHEMA, load } from 'js-yaml';

/**
 * The container deployment (docker/compose.yaml, docker/compose.node.yaml and the services they share in
 * docker/platform.yaml), checked where no container engine runs: every file against the Compose Specification's
 * own JSON schema (test/fixtures/compose-spec), then what the platform needs of it: every service, health checks,
 * restart policies, a volume for every state, secrets only from docker/.env, and only variables the platform reads.
 */

interface Service {
  extends?: { file?: string; service: string };
  image?: string;
  build?: { dockerfile?: string; target?: string };
  command?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
}

interface ComposeFile {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const DOCKER = join(process.cwd(), 'docker');
const FILES = ['compose.yaml', 'compose.node.yaml', 'platform.yaml'];
const PLATFORM_SERVICES = ['registry', 'mcp', 'gateway', 'front'];
/** Every service of the first machine's file, and the volume each keeps its state in. */
const STATE: Record<string, string> = {
  mariadb: 'mariadb',
  redis: 'redis',
  minio: 'minio',
  ollama: 'ollama',
  registry: 'registry-data',
  mcp: 'mcp-data',
  gateway: 'gateway-data',
  front: 'front-data',
};

const text = (file: string) => readFile(join(DOCKER, file), 'utf8');
// Compose reads YAML with merge keys (`<<: *platform`), which YAML 1.1's schema applies.
const parse = async (file: string) => load(await text(file), { schema: YAML11_SCHEMA }) as ComposeFile;

/** A service with its `extends` applied (mappings merged one level deep, as Compose merges environments). */
async function resolved(file: string, name: string): Promise<Service> {
  const service = (await parse(file)).services[name];
  if (!service.extends) return service;
  const base = await resolved(service.extends.file ?? file, service.extends.service);
  const { extends: _extends, ...own } = service;
  return {
    ...base,
    ...own,
    environment: { ...base.environment, ...own.environment },
    depends_on: { ...base.depends_on, ...own.depends_on },
  };
}

/** `${NAME}`, `${NAME:-default}`, `${NAME:?message}` … in a file. */
const variablesOf = (source: string) => [...source.matchAll(/\$\{([A-Z0-9_]+)/g)].map((match) => match[1]);

describe('the container deployment (docker/)', () => {
  it.each(FILES)('%s is valid against the Compose Specification’s JSON schema', async (file) => {
    const schema = JSON.parse(await readFile(join('test', 'fixtures', 'compose-spec', 'compose-spec.json'), 'utf8'));
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(schema);
    const valid = validate(await parse(file));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('deploys every engine and every service of the platform on the first machine', async () => {
    expect(Object.keys((await parse('compose.yaml')).services).sort()).toEqual(Object.keys(STATE).sort());
  });

  it('adds a node on a second machine with the platform’s services only, over the first machine’s engines', async () => {
    expect(Object.keys((await parse('compose.node.yaml')).services).sort()).toEqual([...PLATFORM_SERVICES].sort());
    for (const name of PLATFORM_SERVICES) {
      const service = await resolved('compose.node.yaml', name);
      expect([
        name,
        Object.keys(service.depends_on ?? {}).filter((other) => !PLATFORM_SERVICES.includes(other)),
      ]).toEqual([name, []]);
    }
  });

  it('gives every service a health check and a restart policy', async () => {
    for (const file of ['compose.yaml', 'compose.node.yaml']) {
      for (const name of Object.keys((await parse(file)).services)) {
        const service = await resolved(file, name);
        expect([file, name, service.restart, (service.healthcheck?.test?.length ?? 0) > 0]).toEqual([
          file,
          name,
          'unless-stopped',
          true,
        ]);
      }
    }
  });

  it('keeps every state in a named volume the file declares', async () => {
    for (const file of ['compose.yaml', 'compose.node.yaml']) {
      const compose = await parse(file);
      for (const name of Object.keys(compose.services)) {
        const mounts = ((await resolved(file, name)).volumes ?? []).map((mount) => mount.split(':')[0]);
        expect([file, name, mounts]).toEqual([file, name, [STATE[name]]]);
        expect(compose.volumes).toHaveProperty(STATE[name]);
      }
    }
  });

  it('starts the platform only once its engines answer their health checks', async () => {
    const registry = await resolved('compose.yaml', 'registry');
    expect(registry.depends_on).toEqual({
      mariadb: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      minio: { condition: 'service_healthy' },
    });
    expect((await resolved('compose.yaml', 'gateway')).depends_on).toMatchObject({
      ollama: { condition: 'service_healthy' },
      registry: { condition: 'service_healthy' },
    });
  });

  it('runs every platform service on MariaDB, Redis and the S3 store, with one cluster secret', async () => {
    for (const name of PLATFORM_SERVICES) {
      const environment = (await resolved('compose.yaml', name)).environment ?? {};
      expect([name, environment.DATABASE_URL]).toEqual([
        name,
        expect.stringMatching(/^mysql:\/\/toolbox:\$\{MARIADB_PASSWORD:\?/),
      ]);
      expect([name, environment.REDIS_URL]).toEqual([name, expect.stringMatching(/^redis:\/\//)]);
      expect([name, environment.STORAGE_PRIMARY]).toEqual([name, expect.stringMatching(/^s3\+http:\/\//)]);
      expect([name, environment.CLUSTER_SECRET]).toEqual([
        name,
        '${CLUSTER_SECRET:?set CLUSTER_SECRET in docker/.env}',
      ]);
    }
  });

  it('enables Mroonga in MariaDB, which search ranks in', async () => {
    expect((await parse('compose.yaml')).services.mariadb.build?.dockerfile).toBe('docker/mariadb/Dockerfile');
    expect(await text('mariadb/Dockerfile')).toContain('mariadb-plugin-mroonga');
    expect(await text('mariadb/01-mroonga.sql')).toContain("INSTALL SONAME 'ha_mroonga'");
  });

  it('takes every secret from docker/.env and refuses to start without it', async () => {
    const secrets = [
      'PLATFORM_JWT_SECRET',
      'CLUSTER_SECRET',
      'ADMIN_UI_PASSWORD',
      'MARIADB_ROOT_PASSWORD',
      'MARIADB_PASSWORD',
      'REDIS_PASSWORD',
      'MINIO_ROOT_PASSWORD',
    ];
    const source = (await Promise.all(FILES.map(text))).join('\n');
    for (const secret of secrets) {
      const uses = [...source.matchAll(new RegExp(`\\$\\{${secret}(:[?-][^}]*)?\\}`, 'g'))].map(
        (match) => match[1] ?? '',
      );
      expect([secret, uses.length > 0, uses.every((use) => use.startsWith(':?'))]).toEqual([secret, true, true]);
    }
    expect(source).not.toMatch(/PASSWORD: [^$'\n]/);
  });

  it('documents every variable it reads in docker/.env.example', async () => {
    const example = await text('.env.example');
    const documented = new Set([...example.matchAll(/^([A-Z0-9_]+)=/gm)].map((match) => match[1]));
    const used = new Set((await Promise.all(FILES.map(text))).flatMap(variablesOf));
    expect([...used].filter((name) => !documented.has(name))).toEqual([]);
  });

  it('sets only configuration variables the platform reads (every one is in .env.example)', async () => {
    const platformVariables = new Set(
      [...(await readFile('.env.example', 'utf8')).matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]),
    );
    for (const name of PLATFORM_SERVICES) {
      const unknown = Object.keys((await resolved('compose.yaml', name)).environment ?? {}).filter(
        (variable) => !platformVariables.has(variable) && variable !== 'NODE_ENV',
      );
      expect([name, unknown]).toEqual([name, []]);
    }
  });
});
