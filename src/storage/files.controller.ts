import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/access.decorators.js';
import { PlatformError } from '../common/errors.js';
import { ApiErrors, ApiFileResponse } from '../common/openapi.js';
import { sendStoredObject } from '../common/send-object.js';
import { DownloadCounters } from './download-counters.js';
import { FILES_PATH } from './download-urls.js';
import { StorageService } from './storage.service.js';
import { UrlSigner } from './url-signer.js';

/** What a signed URL may be bound to: nothing (artifacts), or the package visibility it was issued for. */
const SIGNED_SCOPES = [undefined, 'public', 'unlisted', 'private'] as const;

/**
 * Serves the signed, time-limited download URLs. The signature is the authorisation, so any
 * Authorization header a client attaches is ignored rather than checked.
 */
@ApiTags('files')
@Public({ ignoreToken: true })
@Controller('api/v1/files')
export class FilesController {
  constructor(
    private readonly signer: UrlSigner,
    private readonly storage: StorageService,
    private readonly counters: DownloadCounters,
  ) {}

  @Get('*key')
  @ApiOperation({ summary: 'Download a stored file through a signed URL (expires, signature)' })
  @ApiFileResponse('The file', 'application/zip', 'application/octet-stream')
  @ApiErrors({ 403: 'The signature is wrong or expired', 404: 'File not found', 416: 'Range not satisfiable' })
  async download(@Req() request: Request, @Res() response: Response): Promise<void> {
    const path = request.path;
    const key = decodeURIComponent(path.slice(FILES_PATH.length));
    const { verdict, scope } = this.signer.verifyScoped(
      path,
      request.query.expires,
      request.query.signature,
      SIGNED_SCOPES,
    );
    if (verdict === 'expired') throw new PlatformError('FORBIDDEN', 'This download URL has expired; request a new one');
    if (verdict !== 'ok') throw new PlatformError('FORBIDDEN', 'Invalid download URL signature');
    if (!(await this.counters.stillServable(key, scope))) throw new PlatformError('NOT_FOUND', 'File not found');
    const info = await this.storage.stat(key);
    if (!info) throw new PlatformError('NOT_FOUND', 'File not found');
    await sendStoredObject(request, response, {
      size: info.size,
      etag: key.replace(/[^A-Za-z0-9._-]/g, '_'),
      contentType: key.endsWith('.zip') ? 'application/zip' : 'application/octet-stream',
      filename: key.split('/').pop(),
      open: (range) => this.storage.get(key, range),
      onServed: () => this.counters.count(key),
    });
  }
}
