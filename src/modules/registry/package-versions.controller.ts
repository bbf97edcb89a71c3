import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import { sendStoredObject } from '../../common/send-object.js';
import { PLATFORM_CONFIG } from '../../config/config.module.js';
import type { PlatformConfig } from '../../config/config.js';
import type { Caller } from './caller.js';
import { PackageVersionsService } from './package-versions.service.js';
import { YankDto } from './registry.dto.js';
import { packageFileName, versionView } from './registry.views.js';

const UPLOAD_BODY = {
  schema: {
    type: 'object',
    required: ['file', 'version'],
    properties: {
      file: { type: 'string', format: 'binary', description: 'The ZIP archive' },
      version: { type: 'string', example: '1.2.0' },
      changelog: { type: 'string' },
      toolbox_version: { type: 'string', example: '>=0.1.0 <1', description: 'semver range of supported host versions' },
      dependencies: { type: 'string', example: '["lib>=1.2.0", {"name": "other", "version": "^2"}]', description: 'JSON array' },
    },
  },
};

@ApiTags('versions')
@Controller('api/v1/packages/:name')
export class PackageVersionsController {
  constructor(
    private readonly versions: PackageVersionsService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  @Post(['upload', 'versions'])
  @Authenticated()
  @HttpCode(201)
  @ApiOperation({ summary: 'Upload a version (multipart); both seed paths are accepted' })
  @ApiConsumes('multipart/form-data')
  @ApiBody(UPLOAD_BODY)
  @ApiCreatedResponse({ schema: { example: { status: 'uploaded', package: 'CloudM', version: '1.2.0', size: 1234, checksum_sha256: '…', published_at: '…', download_url: '…' } } })
  @ApiConflictResponse({ description: 'The version exists' })
  async upload(@Req() request: Request & AuthenticatedRequest, @CurrentCaller() caller: Caller, @RequestBaseUrl() baseUrl: string, @Param('name') name: string) {
    const body = await readMultipart(request, { fileField: 'file', maxFileBytes: this.config.uploadMaxBytes, tempRoot: uploadTempRoot(this.config) });
    try {
      const { pkg, version } = await this.versions.upload(caller, name, body);
      return {
        status: 'uploaded',
        package: pkg.name,
        version: version.version,
        size: version.sizeBytes,
        checksum_sha256: version.checksumSha256,
        published_at: version.publishedAt.toISOString(),
        download_url: this.versions.signedUrl(version.storageKey, baseUrl),
      };
    } finally {
      await body.cleanup();
    }
  }

  @Get('versions/:version/download')
  @Public()
  @ApiOperation({ summary: 'A signed, time-limited download URL (token required for unlisted and private packages)' })
  @ApiOkResponse({ schema: { example: { url: 'http://…/api/v1/files/…?expires=…&signature=…', expires_in: 600, size: 1, checksum_sha256: '…', filename: 'x-1.0.0.zip', yanked: false } } })
  async downloadUrl(@CurrentCaller() caller: Caller, @RequestBaseUrl() baseUrl: string, @Param('name') name: string, @Param('version') version: string) {
    const ticket = await this.versions.downloadTicket(caller, name, version, baseUrl);
    return {
      url: ticket.url,
      expires_in: ticket.expiresIn,
      size: ticket.size,
      checksum_sha256: ticket.checksumSha256,
      filename: ticket.filename,
      yanked: ticket.yanked,
    };
  }

  @Get('versions/:version')
  @Public()
  @ApiOperation({ summary: 'The version file (application/zip, ranges supported), or its JSON detail with Accept: application/json' })
  @ApiProduces('application/zip', 'application/json')
  async version(
    @Req() request: Request & AuthenticatedRequest,
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Res() response: Response,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<void> {
    const { pkg, version: row } = await this.versions.findVersion(caller, name, version);
    if (request.accepts(['application/zip', 'application/octet-stream', 'application/json']) === 'application/json') {
      response.json({
        package: pkg.name,
        ...versionView(row),
        download_url: this.versions.signedUrl(row.storageKey, baseUrl),
      });
      return;
    }
    await sendStoredObject(request, response, {
      size: row.sizeBytes,
      etag: row.checksumSha256,
      contentType: 'application/zip',
      filename: packageFileName(pkg, row),
      headers: { 'X-Checksum-Sha256': row.checksumSha256 },
      open: (range) => this.versions.open(row, range),
      onServed: () => this.versions.countDownload(row.storageKey),
    });
  }

  @Post('versions/:version/yank')
  @Authenticated()
  @HttpCode(200)
  @ApiOperation({ summary: 'Yank a version (owner or admin); it stays downloadable by exact version' })
  async yank(@CurrentCaller() caller: Caller, @Param('name') name: string, @Param('version') version: string, @Body() body: YankDto) {
    return versionView(await this.versions.setYanked(caller, name, version, true, body.reason));
  }

  @Post('versions/:version/unyank')
  @Authenticated()
  @HttpCode(200)
  @ApiOperation({ summary: 'Reverse a yank (owner or admin)' })
  async unyank(@CurrentCaller() caller: Caller, @Param('name') name: string, @Param('version') version: string) {
    return versionView(await this.versions.setYanked(caller, name, version, false));
  }
}
