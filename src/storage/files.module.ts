import { Global, Module } from '@nestjs/common';
import { DownloadCounters } from './download-counters.js';
import { FilesController } from './files.controller.js';

/** The signed-URL file route, for services that hand out download URLs (the registry). */
@Global()
@Module({ controllers: [FilesController], providers: [DownloadCounters], exports: [DownloadCounters] })
export class FilesModule {}
