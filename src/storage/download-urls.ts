import { Inject, Injectable } from '@nestjs/common';
import { REGISTRY_CONFIG } from '../config/config.module.js';
import type { RegistryConfig } from '../config/config.js';
import { UrlSigner } from './url-signer.js';

/** Where the platform serves stored files through signed URLs (FilesController). */
export const FILES_PATH = '/api/v1/files/';

/** Signed, time-limited addresses of stored objects, served by the platform itself. */
@Injectable()
export class DownloadUrls {
  constructor(
    private readonly signer: UrlSigner,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
  ) {}

  get ttlSeconds(): number {
    return this.registry.signedUrlTtlSeconds;
  }

  /** `baseUrl` is the request's public base URL (`@RequestBaseUrl()`, common/request-base-url.ts: PUBLIC_BASE_URL or the request's origin). */
  /** `visibility`: what the object's owner was at issue time; the URL stops working once it turns private. */
  signedUrl(storageKey: string, baseUrl: string, visibility?: string): string {
    const path = `${FILES_PATH}${storageKey}`;
    const { query } = this.signer.sign(path, this.registry.signedUrlTtlSeconds, Date.now(), visibility);
    return `${baseUrl}${path}?${query}`;
  }
}
