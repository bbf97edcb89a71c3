import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import { ApiErrors, ApiFileOrJsonResponse } from '../../common/openapi.js';
import { sendStoredObject } from '../../common/send-object.js';
import { INFRASTRUCTURE_CONFIG, REGISTRY_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig, RegistryConfig } from '../../config/config.js';
import type { Caller } from './caller.js';
import { PackageVersionsService } from './package-versions.service.js';
import { YankDto } from './registry.dto.js';
import { DownloadTicketDto, UploadedVersionDto, VersionDetailDto, VersionDto } from './registry.responses.js';
import { packageFileName } from './package-file-name.js';
import { downloadTicketView, uploadedVersionView, versionDetailView, versionView } from './registry.views.js';

const UPLOAD_BODY = {
  schema: {
    type: 'object',
    required: ['file', 'version'],
    properties: {
      file: { type: 'string', format: 'binary', description: 'The ZIP archive' },
      version: { type: 'string', example: '1.2.0' },
      changelog: { type: 'string' },
      toolbox_version: {
        type: 'string',
        example: '>=0.1.0 <1',
        description: 'semver range of supported host versions',
      },
      dependencies: {
        type: 'string',
        example: '["lib>=1.2.0", {"name": "other", "version": "^2"}]',
        description: 'JSON array',
      },
    },
  },
};

@ApiTags('versions')
@Controller('api/v1/packages/:name')
export class PackageVersionsController {
  constructor(
    private readonly versions: PackageVersionsService,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
  ) {}

  @Post(['upload', 'versions'])
  @Authenticated()
  @HttpCode(201)
  @ApiOperation({ summary: 'Upload a version (multipart); /versions and /upload are the same route' })
  @ApiConsumes('multipart/form-data')
  @ApiBody(UPLOAD_BODY)
  @ApiCreatedResponse({ type: UploadedVersionDto })
  @ApiErrors({
    403: 'Not the publisher of the package, or the publisher is suspended',
    404: 'Unknown package',
    409: 'The version exists',
    400: 'A malformed multipart body: a second file part, a file part not named file, a field sent twice, too many parts',
    413: 'Over UPLOAD_MAX_BYTES, a text field over 1 MiB, or text fields together over 2 MiB',
    422: 'Bad version or dependencies, no file, or a rejected archive',
  })
  async upload(
    @Req() request: Request,
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Param('name') name: string,
  ) {
    // Auth, package, ownership (and a version named in the query) are checked before a byte is staged.
    const queryVersion = typeof request.query.version === 'string' ? request.query.version : undefined;
    let pkg;
    try {
      pkg = await this.versions.assertMayUpload(caller, name, queryVersion);
    } catch (error) {
      // Refused before reading the body: drain it so the client still receives the answer.
      request.resume();
      throw error;
    }
    const body = await readMultipart(request, {
      fileField: 'file',
      maxFileBytes: this.registry.uploadMaxBytes,
      tempRoot: uploadTempRoot(this.infrastructure),
      // A version field sent before the file (as clients do) is checked before the file is staged.
      beforeFile: (fields) => this.versions.assertVersionNotTaken(pkg, fields.version),
    });
    try {
      const { pkg, version } = await this.versions.upload(caller, name, body);
      return uploadedVersionView(pkg, version, this.versions.signedUrl(version.storageKey, baseUrl, pkg.visibility));
    } finally {
      await body.cleanup();
    }
  }

  @Get('versions/:version/download')
  @Public()
  @ApiOperation({ summary: 'A signed, time-limited download URL (token required for unlisted and private packages)' })
  @ApiOkResponse({ type: DownloadTicketDto })
  @ApiErrors({ 404: 'Unknown package or version, or not visible to the caller' })
  async downloadUrl(
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ) {
    const ticket = await this.versions.downloadTicket(caller, name, version, baseUrl);
    return downloadTicketView(ticket);
  }

  @Get('versions/:version')
  @Public()
  @ApiOperation({
    summary: 'The version file (application/zip, ranges supported), or its JSON detail with Accept: application/json',
  })
  @ApiFileOrJsonResponse(
    'The ZIP file (X-Checksum-Sha256 carries its SHA-256), or with Accept: application/json its detail',
    'application/zip',
    VersionDetailDto,
  )
  @ApiErrors({ 404: 'Unknown package or version, or not visible to the caller', 416: 'Range not satisfiable' })
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
      response.json(versionDetailView(pkg, row, this.versions.signedUrl(row.storageKey, baseUrl, pkg.visibility)));
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
  @ApiOkResponse({ type: VersionDto })
  @ApiErrors({ 403: 'Not the owner nor an admin', 404: 'Unknown package or version' })
  async yank(
    @CurrentCaller() caller: Caller,
    @Param('name') name: string,
    @Param('version') version: string,
    @Body() body: YankDto,
  ) {
    return versionView(await this.versions.setYanked(caller, name, version, true, body.reason));
  }

  @Post('versions/:version/unyank')
  @Authenticated()
  @HttpCode(200)
  @ApiOperation({ summary: 'Reverse a yank (owner or admin)' })
  @ApiOkResponse({ type: VersionDto })
  @ApiErrors({ 403: 'Not the owner nor an admin', 404: 'Unknown package or version' })
  async unyank(@CurrentCaller() caller: Caller, @Param('name') name: string, @Param('version') version: string) {
    return versionView(await this.versions.setYanked(caller, name, version, false));
  }
}
