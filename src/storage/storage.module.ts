import { Global, Module } from '@nestjs/common';
import { INFRASTRUCTURE_CONFIG } from '../config/config.module.js';
import { requireJwtSecret, type InfrastructureConfig } from '../config/config.js';
import { createObjectStore } from './object-store.factory.js';
import { StorageService } from './storage.service.js';
import { OBJECT_STORES } from './storage.tokens.js';
import { UrlSigner } from './url-signer.js';
import { DownloadUrls } from './download-urls.js';

@Global()
@Module({
  providers: [
    {
      provide: OBJECT_STORES,
      inject: [INFRASTRUCTURE_CONFIG],
      useFactory: (config: InfrastructureConfig) =>
        [config.storage.primary, ...config.storage.mirrors].map(createObjectStore),
    },
    {
      provide: UrlSigner,
      inject: [INFRASTRUCTURE_CONFIG],
      useFactory: (config: InfrastructureConfig) => new UrlSigner(requireJwtSecret(config, 'signed download URLs')),
    },
    StorageService,
    DownloadUrls,
  ],
  exports: [StorageService, UrlSigner, DownloadUrls],
})
export class StorageModule {}
