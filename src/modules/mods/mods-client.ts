import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { gt, valid } from 'semver';
import { PlatformError, type ErrorCode } from '../../common/errors.js';
import type { ZipLimits } from '../../packaging/zip-inspector.js';
import { MOD_MANIFEST_FILE, parseModManifest } from './mod-manifest.js';
import { packModDirectory } from './mod-packer.js';
import { ModsLockFile, type LockedMod } from './mods-lock-file.js';
import { extractArchiveSafely } from './safe-extractor.js';

export interface ModsClientOptions {
  /** Registry base URL (`http://127.0.0.1:4025`); the API lives under `/api/v1`. */
  registryUrl: string;
  /** Bearer token (needed to publish, and to install unlisted or private mods). */
  token?: string | null;
  modsDir: string;
  /** Host platform version sent to the resolver as `toolbox_version`. */
  hostVersion: string;
  /** Limits of the pre-extraction check (default: the registry's upload limits). */
  zipLimits?: Partial<ZipLimits>;
  fetch?: typeof fetch;
}

/** One entry of the registry's resolution result (`POST /api/v1/resolve`). */
export interface ResolvedEntry {
  name: string;
  version: string;
  download_url: string;
  checksum?: string;
  checksum_sha256?: string;
  dependencies?: string[];
}

export interface InstallOutcome {
  name: string;
  version: string;
  /** `installed`: written now; `unchanged`: the same version and checksum were installed already. */
  status: 'installed' | 'unchanged';
  previous_version: string | null;
}

export interface InstallReport {
  requirement: string;
  mods: InstallOutcome[];
  warnings: string[];
}

export interface InstalledMod extends LockedMod {
  /** False when the lock names a mod whose directory has gone. */
  present: boolean;
}

export interface UpdateReport {
  updated: Array<{ name: string; from: string; to: string }>;
  current: Array<{ name: string; version: string }>;
  /** Mods with a newer version that could not be installed (for example an unsupported platform version). */
  failed: Array<{ name: string; error: string }>;
}

export interface PublishReport {
  package: string;
  version: string;
  /** True when the package did not exist and was created. */
  created: boolean;
  size: number;
  checksum_sha256: string;
}

const STAGING_DIRECTORY = '.staging';
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
};

/**
 * Installs, updates, removes and publishes mods against a package registry:
 * resolve (`POST /api/v1/resolve`) → download each file → verify its SHA-256 → inspect and extract
 * safely into a staging directory → swap it into `<modsDir>/<name>` → record it in the lock file.
 */
export class ModsClient {
  readonly lock: ModsLockFile;
  private readonly registryUrl: string;
  private readonly fetchFunction: typeof fetch;

  constructor(private readonly options: ModsClientOptions) {
    this.registryUrl = options.registryUrl.replace(/\/+$/, '');
    this.lock = new ModsLockFile(options.modsDir);
    this.fetchFunction = options.fetch ?? fetch;
  }

  /** `NAME`, `NAME@RANGE` or any requirement form the registry accepts (`NAME>=1.2`). */
  async install(requirement: string): Promise<InstallReport> {
    const resolution = await this.resolve(requirement);
    const report: InstallReport = { requirement, mods: [], warnings: resolution.warnings };
    for (const entry of resolution.resolved) report.mods.push(await this.installResolved(entry));
    return report;
  }

  /** The lock file's mods, each with whether its directory is present. */
  async list(): Promise<InstalledMod[]> {
    const mods = await this.lock.list();
    return Promise.all(
      mods.map(async (mod) => ({
        ...mod,
        present: await exists(join(this.options.modsDir, modDirectoryName(mod.name, mod.version), MOD_MANIFEST_FILE)),
      })),
    );
  }

  /** Deletes an installed mod's directory and its lock entry. */
  async remove(name: string): Promise<LockedMod> {
    const locked = await this.lock.get(name);
    if (!locked) throw new PlatformError('NOT_FOUND', `mod ${name} is not installed`);
    await this.lock.remove(name);
    await rm(join(this.options.modsDir, modDirectoryName(name, locked.version)), { recursive: true, force: true });
    return locked;
  }

  /**
   * Asks the registry for the latest versions of the installed mods in one request
   * (`GET /api/v1/versions?names=…`), then installs a newer version of each mod that has one.
   */
  async update(name?: string): Promise<UpdateReport> {
    const installed = (await this.lock.list()).filter((mod) => name === undefined || mod.name === name);
    if (name !== undefined && installed.length === 0)
      throw new PlatformError('NOT_FOUND', `mod ${name} is not installed`);
    const report: UpdateReport = { updated: [], current: [], failed: [] };
    if (installed.length === 0) return report;
    const query = installed.map((mod) => `names=${encodeURIComponent(mod.name)}`).join('&');
    const body = (await this.request('GET', `/api/v1/versions?${query}`)) as {
      versions?: Record<string, string | null>;
    };
    const latest = body.versions ?? {};
    for (const mod of installed) {
      const newest = latest[mod.name];
      if (!newest || !valid(newest) || !gt(newest, mod.version)) {
        report.current.push({ name: mod.name, version: mod.version });
        continue;
      }
      try {
        // A range rather than the exact latest: the newest version this platform supports wins.
        const outcome = await this.install(`${mod.name}@>${mod.version}`);
        const own = outcome.mods.find((item) => item.name === mod.name);
        report.updated.push({ name: mod.name, from: mod.version, to: own?.version ?? newest });
      } catch (error) {
        report.failed.push({ name: mod.name, error: (error as Error).message });
      }
    }
    return report;
  }

  /**
   * Packs `directory`, creates the package when the registry does not know it, and uploads the
   * version with the manifest's dependencies and toolbox_version.
   */
  async publish(directory: string, options: { changelog?: string } = {}): Promise<PublishReport> {
    if (!this.options.token)
      throw new PlatformError('UNAUTHORIZED', 'publishing needs a token: pass --token or set TB_TOKEN');
    const { manifest, archive } = await packModDirectory(directory);
    const name = manifest.name;
    let created = false;
    const existing = await this.fetchRegistry('GET', `/api/v1/packages/${encodeURIComponent(name)}`);
    if (existing.status === 404) {
      await this.request('POST', '/api/v1/packages', {
        name,
        display_name: name,
        description: manifest.description ?? `The ${name} mod`,
        package_type: 'mod',
      });
      created = true;
    } else if (!existing.ok) {
      throw await registryError(existing, `GET /api/v1/packages/${name}`);
    } else {
      await existing.arrayBuffer();
    }
    const form = new FormData();
    form.append('version', manifest.version);
    if (options.changelog) form.append('changelog', options.changelog);
    if (manifest.toolboxVersion) form.append('toolbox_version', manifest.toolboxVersion);
    form.append('dependencies', JSON.stringify(manifest.dependencies));
    form.append(
      'file',
      new Blob([new Uint8Array(archive)], { type: 'application/zip' }),
      `${name}-${manifest.version}.zip`,
    );
    const uploaded = (await this.request('POST', `/api/v1/packages/${encodeURIComponent(name)}/upload`, form)) as {
      size?: number;
      checksum_sha256?: string;
    };
    return {
      package: name,
      version: manifest.version,
      created,
      size: uploaded.size ?? archive.length,
      checksum_sha256: uploaded.checksum_sha256 ?? createHash('sha256').update(archive).digest('hex'),
    };
  }

  private async resolve(requirement: string): Promise<{ resolved: ResolvedEntry[]; warnings: string[] }> {
    const body = (await this.request('POST', '/api/v1/resolve', {
      requirements: [requirement],
      toolbox_version: this.options.hostVersion,
    })) as {
      success?: boolean;
      resolved?: Record<string, ResolvedEntry>;
      conflicts?: unknown[];
      warnings?: unknown[];
      errors?: unknown[];
    };
    if (!body.success) {
      const reasons = [...(body.errors ?? []), ...(body.conflicts ?? [])].map((item) =>
        typeof item === 'string' ? item : JSON.stringify(item),
      );
      throw new PlatformError(
        'CONFLICT',
        `cannot resolve ${requirement}: ${reasons.join('; ') || 'the registry found no solution'}`,
      );
    }
    const resolved = Object.values(body.resolved ?? {});
    if (resolved.length === 0) throw new PlatformError('NOT_FOUND', `the registry resolved ${requirement} to nothing`);
    return {
      resolved,
      warnings: (body.warnings ?? []).map((item) => (typeof item === 'string' ? item : JSON.stringify(item))),
    };
  }

  private async installResolved(entry: ResolvedEntry): Promise<InstallOutcome> {
    const expected = (entry.checksum_sha256 ?? entry.checksum ?? '').toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(expected))
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `the registry gave no SHA-256 for ${entry.name}@${entry.version}`,
      );
    const previous = await this.lock.get(entry.name);
    const target = join(this.options.modsDir, modDirectoryName(entry.name, entry.version));
    if (
      previous &&
      previous.version === entry.version &&
      previous.checksum_sha256 === expected &&
      (await exists(join(target, MOD_MANIFEST_FILE)))
    ) {
      return { name: entry.name, version: entry.version, status: 'unchanged', previous_version: previous.version };
    }
    const staging = join(this.options.modsDir, STAGING_DIRECTORY);
    await mkdir(staging, { recursive: true });
    const token = randomBytes(6).toString('hex');
    const archivePath = join(staging, `${entry.name}-${token}.zip`);
    const extracted = join(staging, `${entry.name}-${token}`);
    const retired = join(staging, `${entry.name}-${token}-previous`);
    try {
      const actual = await this.download(entry, archivePath);
      if (actual !== expected) {
        throw new PlatformError(
          'UNPROCESSABLE_ENTITY',
          `${entry.name}@${entry.version}: SHA-256 mismatch (expected ${expected}, downloaded ${actual}); nothing was installed`,
        );
      }
      await extractArchiveSafely(archivePath, extracted, this.options.zipLimits);
      const manifest = parseModManifest(await readManifest(extracted, entry));
      if (manifest.name !== entry.name || manifest.version !== entry.version) {
        throw new PlatformError(
          'UNPROCESSABLE_ENTITY',
          `${entry.name}@${entry.version}: its ${MOD_MANIFEST_FILE} says ${manifest.name}@${manifest.version}`,
        );
      }
      if (!(await exists(join(extracted, ...manifest.entry.split('/'))))) {
        throw new PlatformError(
          'UNPROCESSABLE_ENTITY',
          `${entry.name}@${entry.version}: the entry ${manifest.entry} is missing from the archive`,
        );
      }
      // Plain `.js` entries are ES modules: a package.json saying so makes Node (and Jest) agree.
      if (!(await exists(join(extracted, 'package.json')))) {
        await writeFile(
          join(extracted, 'package.json'),
          `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`,
          { mode: 0o644 },
        );
      }
      const hadPrevious = await exists(target);
      if (hadPrevious) await rename(target, retired);
      await rename(extracted, target);
      // The lock names the directory the loader uses; the previous version's goes once the lock has moved on.
      await this.lock.record({
        name: manifest.name,
        version: manifest.version,
        checksum_sha256: expected,
        registry: this.registryUrl,
        installed_at: new Date().toISOString(),
        entry: manifest.entry,
        dependencies: manifest.dependencies,
      });
      if (previous && previous.version !== manifest.version) {
        await rm(join(this.options.modsDir, modDirectoryName(previous.name, previous.version)), {
          recursive: true,
          force: true,
        });
      }
      return {
        name: entry.name,
        version: entry.version,
        status: 'installed',
        previous_version: previous?.version ?? null,
      };
    } finally {
      await rm(archivePath, { force: true });
      await rm(extracted, { recursive: true, force: true });
      await rm(retired, { recursive: true, force: true });
    }
  }

  /** Streams the file to `path` while hashing it; returns the hex SHA-256. */
  private async download(entry: ResolvedEntry, path: string): Promise<string> {
    const url = new URL(entry.download_url, `${this.registryUrl}/`);
    const headers: Record<string, string> = {};
    // Only the registry itself gets the token, never a storage host a signed URL points at.
    if (this.options.token && url.origin === new URL(this.registryUrl).origin)
      headers.authorization = `Bearer ${this.options.token}`;
    const response = await this.fetchFunction(url, { headers });
    if (!response.ok || !response.body)
      throw await registryError(response, `download of ${entry.name}@${entry.version}`);
    const hash = createHash('sha256');
    const hasher = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    await pipeline(
      Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
      hasher,
      createWriteStream(path, { mode: 0o600 }),
    );
    return hash.digest('hex');
  }

  private async fetchRegistry(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let payload: FormData | string | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    try {
      return await this.fetchFunction(`${this.registryUrl}${path}`, { method, headers, body: payload });
    } catch (error) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `registry ${this.registryUrl} unreachable: ${(error as Error).message}`,
      );
    }
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.fetchRegistry(method, path, body);
    if (!response.ok) throw await registryError(response, `${method} ${path.split('?')[0]}`);
    return response.json();
  }
}

async function registryError(response: Response, what: string): Promise<PlatformError> {
  let message = `HTTP ${response.status}`;
  try {
    const text = await response.text();
    try {
      const parsed = JSON.parse(text) as { message?: string; code?: string };
      if (parsed.message) message = `${parsed.code ?? response.status}: ${parsed.message}`;
    } catch {
      if (text) message = `HTTP ${response.status}: ${text.slice(0, 200)}`;
    }
  } catch {
    // the body is optional in the message
  }
  return new PlatformError(
    STATUS_CODES[response.status] ?? 'SERVICE_UNAVAILABLE',
    `registry refused ${what}: ${message}`,
  );
}

async function readManifest(directory: string, entry: ResolvedEntry): Promise<string> {
  try {
    return await readFile(join(directory, MOD_MANIFEST_FILE), 'utf8');
  } catch {
    throw new PlatformError(
      'UNPROCESSABLE_ENTITY',
      `${entry.name}@${entry.version} has no ${MOD_MANIFEST_FILE} at the root of its archive`,
    );
  }
}

/**
 * `<name>@<version>`: one directory per installed version, so a process that imported one version
 * (ES modules are cached by URL for the life of the process) imports the next from a new URL.
 */
export function modDirectoryName(name: string, version: string): string {
  return `${name}@${version}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
