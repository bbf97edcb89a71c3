import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { PlatformError } from '../../common/errors.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { GATEWAY_CONFIG, INFRASTRUCTURE_CONFIG } from '../../config/config.module.js';
import type { GatewayConfig, InfrastructureConfig } from '../../config/config.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { checkModelName, type PullProgress } from './models.service.js';

export interface HubModel {
  id: string;
  downloads: number;
  likes: number;
  tags: string[];
}

export interface HubFile {
  path: string;
  size: number;
  /** The LFS object id: the file's SHA-256, which the download is checked against. */
  sha256: string | null;
}

const REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const FILE = /^[A-Za-z0-9._/-]+\.gguf$/i;

function badRequest(field: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field, message }]);
}

/** `hf.co/org/Repo-GGUF` + `model.Q4_K_M.gguf` → `repo-gguf:q4_k_m` (Ollama names are lower case). */
export function defaultModelName(repo: string, file: string): string {
  const base = repo.split('/')[1].toLowerCase();
  const quant = /[.-]((?:i?q\d[\w]*)|f16|f32|bf16)\.gguf$/i.exec(file)?.[1]?.toLowerCase() ?? 'latest';
  return `${base}:${quant}`;
}

/**
 * Model hub import (Hugging Face's API at HF_BASE_URL, `hf_token` as its bearer token): search GGUF repos,
 * and download one GGUF file with progress, refusing files over GATEWAY_HUB_MAX_BYTES before the first
 * byte, hashing while it streams to DATA_DIR/gateway/downloads and comparing with the hub's LFS SHA-256;
 * then it is handed to Ollama as a blob and created as a model. The temporary file is always removed.
 */
@Injectable()
export class ModelHubService {
  constructor(
    private readonly gateway: GatewaySettingsService,
    @Inject(GATEWAY_CONFIG) private readonly gatewayConfig: GatewayConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
  ) {}

  private headers(): Record<string, string> {
    const token = this.gateway.settings.hf_token;
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  private async hub(path: string): Promise<Response> {
    const url = `${this.gatewayConfig.hubUrl}${path}`;
    let response: Response;
    try {
      response = await fetch(url, { headers: this.headers(), signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new PlatformError(
        'SERVICE_UNAVAILABLE',
        `The model hub at ${this.gatewayConfig.hubUrl} cannot be reached (${(error as Error).message})`,
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new PlatformError(
        'BAD_REQUEST',
        `The model hub refused access to ${path} (set hf_token for gated or private repositories)`,
      );
    }
    if (response.status === 404) throw new PlatformError('NOT_FOUND', `The model hub has no ${path}`);
    // It answered, badly: a bad upstream answer (502). 503 stays for a hub that cannot be reached at all.
    if (!response.ok) throw new PlatformError('BAD_GATEWAY', `The model hub answered ${response.status} for ${path}`);
    return response;
  }

  async search(query: string, limit: number): Promise<HubModel[]> {
    const params = new URLSearchParams({ search: query, filter: 'gguf', limit: String(limit), sort: 'downloads' });
    const models = (await (await this.hub(`/api/models?${params}`)).json()) as Array<Record<string, unknown>>;
    return models.map((model) => ({
      id: String(model.id ?? model.modelId),
      downloads: Number(model.downloads ?? 0),
      likes: Number(model.likes ?? 0),
      tags: Array.isArray(model.tags) ? model.tags.map(String) : [],
    }));
  }

  async files(repo: string, revision = 'main'): Promise<HubFile[]> {
    if (!REPO.test(repo)) badRequest('repo', "'repo' must be owner/name");
    const entries = (await (
      await this.hub(`/api/models/${repo}/tree/${encodeURIComponent(revision)}`)
    ).json()) as Array<{
      type: string;
      path: string;
      size: number;
      lfs?: { oid?: string; size?: number };
    }>;
    return entries
      .filter((entry) => entry.type === 'file' && FILE.test(entry.path))
      .map((entry) => ({ path: entry.path, size: entry.lfs?.size ?? entry.size, sha256: entry.lfs?.oid ?? null }));
  }

  /** Downloads, verifies and imports one GGUF file, yielding progress; the first record comes after every check that can fail early. */
  async *download(input: {
    repo: unknown;
    file: unknown;
    name?: unknown;
    revision?: unknown;
  }): AsyncGenerator<PullProgress> {
    const repo = typeof input.repo === 'string' ? input.repo : '';
    const file = typeof input.file === 'string' ? input.file : '';
    if (!REPO.test(repo)) badRequest('repo', "'repo' must be owner/name");
    if (!FILE.test(file) || file.includes('..')) badRequest('file', "'file' must be a .gguf file of the repository");
    const revision = typeof input.revision === 'string' && input.revision ? input.revision : 'main';
    const name = input.name === undefined ? defaultModelName(repo, file) : checkModelName(input.name);
    const entry = (await this.files(repo, revision)).find((candidate) => candidate.path === file);
    if (!entry) throw new PlatformError('NOT_FOUND', `${repo} has no file ${file} at ${revision}`);
    if (entry.size > this.gatewayConfig.hubMaxBytes) {
      throw new PlatformError(
        'PAYLOAD_TOO_LARGE',
        `${file} is ${entry.size} bytes, over GATEWAY_HUB_MAX_BYTES (${this.gatewayConfig.hubMaxBytes})`,
      );
    }
    if (!entry.sha256)
      throw new PlatformError('BAD_REQUEST', `The hub gives no SHA-256 for ${file}; refusing an unverifiable download`);
    const response = await this.hub(`/${repo}/resolve/${encodeURIComponent(revision)}/${file}`);
    const directory = join(this.infrastructure.dataDir, 'gateway', 'downloads');
    await mkdir(directory, { recursive: true });
    const temporary = join(directory, `${randomUUID()}.gguf.part`);
    try {
      yield { status: `downloading ${repo}/${file}`, total: entry.size, completed: 0, percent: 0 };
      const hash = createHash('sha256');
      const out = createWriteStream(temporary);
      let completed = 0;
      let lastReported = 0;
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          completed += chunk.byteLength;
          if (completed > this.gatewayConfig.hubMaxBytes || completed > entry.size) {
            throw new PlatformError(
              'PAYLOAD_TOO_LARGE',
              `${file} sent more bytes than the hub announced (${entry.size})`,
            );
          }
          hash.update(chunk);
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
          if (completed - lastReported >= Math.max(1, Math.floor(entry.size / 100))) {
            lastReported = completed;
            yield {
              status: `downloading ${repo}/${file}`,
              total: entry.size,
              completed,
              percent: Math.floor((completed / entry.size) * 100),
            };
          }
        }
      } finally {
        await new Promise<void>((resolve, reject) =>
          out.end((error?: Error | null) => (error ? reject(error) : resolve())),
        );
      }
      const digest = hash.digest('hex');
      if (completed !== entry.size)
        throw new PlatformError('BAD_REQUEST', `${file} ended after ${completed} of ${entry.size} bytes`);
      if (digest !== entry.sha256) {
        throw new PlatformError(
          'BAD_REQUEST',
          `${file} failed the SHA-256 check (hub ${entry.sha256}, downloaded ${digest})`,
        );
      }
      yield { status: 'verified sha256', digest: `sha256:${digest}`, total: entry.size, completed, percent: 100 };
      yield* this.importFile(temporary, digest, entry.size, name, file);
    } finally {
      await rm(temporary, { force: true });
    }
  }

  /** Hands a verified GGUF file to the runtime as a blob and creates the model from it. */
  async *importFile(
    path: string,
    sha256: string,
    size: number,
    name: string,
    fileName: string,
  ): AsyncGenerator<PullProgress> {
    yield { status: 'uploading to the runtime', digest: `sha256:${sha256}` };
    await this.gateway.client.pushBlob(`sha256:${sha256}`, await openAsBlob(path), size);
    try {
      for await (const record of this.gateway.client.create(name, {
        [fileName.split('/').pop()!]: `sha256:${sha256}`,
      })) {
        if (record.error) throw new PlatformError('BAD_REQUEST', `Creating ${name} failed: ${record.error}`);
        yield record.status === 'success' ? { status: 'success', digest: `sha256:${sha256}` } : record;
      }
    } finally {
      this.gateway.catalog.invalidate();
    }
  }

  /** `import-gguf`: a multipart upload (`file`, `name`), hashed while it is stored, then imported like a download. */
  async *importUpload(request: Request): AsyncGenerator<PullProgress> {
    if (!String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      badRequest('file', 'Send the GGUF file as multipart/form-data with fields file and name');
    }
    const upload = await readMultipart(request, {
      fileField: 'file',
      tempRoot: uploadTempRoot(this.infrastructure),
      maxFileBytes: this.gatewayConfig.hubMaxBytes,
    });
    try {
      if (!upload.file) badRequest('file', "'file' is required");
      const name = checkModelName(upload.fields.name);
      yield { status: 'received', total: upload.file.size, completed: upload.file.size, percent: 100 };
      yield* this.importFile(
        upload.file.path,
        upload.file.sha256,
        upload.file.size,
        name,
        upload.file.filename || 'model.gguf',
      );
    } finally {
      await upload.cleanup();
    }
  }
}
