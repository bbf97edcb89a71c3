import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { readMultipart, uploadTempRoot } from '../../common/multipart-reader.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import { ApiErrors, ApiFileResponse } from '../../common/openapi.js';
import { sendStoredObject } from '../../common/send-object.js';
import { INFRASTRUCTURE_CONFIG, REGISTRY_CONFIG } from '../../config/config.module.js';
import type { InfrastructureConfig, RegistryConfig } from '../../config/config.js';
import type { Caller } from '../registry/index.js';
import { ArtifactBuildsService } from './artifact-builds.service.js';
import { canonicalArtifactType } from './artifact-vocabulary.js';
import { BuildQuery, CreateArtifactDto, ListArtifactsQuery, UPLOAD_BUILD_BODY } from './artifacts.dto.js';
import { ArtifactsService } from './artifacts.service.js';
import {
  ArtifactDetailDto,
  ArtifactListDto,
  BuildDownloadTicketDto,
  LatestBuildDto,
  UploadedBuildDto,
} from './artifacts.responses.js';
import {
  artifactDetail,
  artifactListView,
  buildDownloadTicketView,
  latestBuildView,
  uploadedBuildView,
} from './artifacts.views.js';

@ApiTags('artifacts')
@Controller('api/v1/artifacts')
export class ArtifactsController {
  constructor(
    private readonly artifacts: ArtifactsService,
    private readonly builds: ArtifactBuildsService,
    @Inject(REGISTRY_CONFIG) private readonly registry: RegistryConfig,
    @Inject(INFRASTRUCTURE_CONFIG) private readonly infrastructure: InfrastructureConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'List artifacts, most recently updated first' })
  @ApiOkResponse({ type: ArtifactListDto })
  @ApiErrors({ 400: 'Invalid page, per_page or artifact_type' })
  async list(@Query() query: ListArtifactsQuery) {
    const { items, total } = await this.artifacts.list({
      page: query.page,
      perPage: query.per_page,
      artifactType: query.artifact_type ? (canonicalArtifactType(query.artifact_type) ?? undefined) : undefined,
      publisher: query.publisher,
    });
    return artifactListView(items, total, query.page, query.per_page);
  }

  @Post()
  @Authenticated()
  @HttpCode(201)
  @ApiOperation({ summary: "Create an artifact owned by the caller's publisher" })
  @ApiCreatedResponse({ type: ArtifactDetailDto })
  @ApiErrors({
    403: 'No publisher, a suspended one, or (REGISTRY_REQUIRE_VERIFIED_PUBLISHER) an unverified one',
    409: 'The name is taken (case-insensitively)',
    422: 'Unknown artifact_type, bad name or URL',
  })
  async create(@CurrentCaller() caller: Caller, @Body() body: CreateArtifactDto) {
    const { artifact, publisher } = await this.artifacts.create(caller, {
      name: body.name,
      artifactType: canonicalArtifactType(body.artifact_type)!,
      description: body.description,
      homepage: body.homepage,
      repository: body.repository,
    });
    return artifactDetail(artifact, publisher, []);
  }

  @Get(':name')
  @Public()
  @ApiOperation({ summary: 'Artifact detail with every version and its builds' })
  @ApiOkResponse({ type: ArtifactDetailDto })
  @ApiErrors({ 404: 'Unknown artifact' })
  async detail(@Param('name') name: string) {
    const { artifact, publisher, versions } = await this.artifacts.detail(name);
    return artifactDetail(artifact, publisher, versions);
  }

  @Post(':name/builds')
  @Authenticated()
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Upload a build (multipart); one build per platform and architecture of a version (publisher of the artifact)',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody(UPLOAD_BUILD_BODY)
  @ApiCreatedResponse({ type: UploadedBuildDto })
  @ApiErrors({
    403: 'Not the publisher of the artifact, or the publisher is suspended',
    404: 'Unknown artifact',
    409: 'The version already has a build for this platform and architecture',
    400: 'A malformed multipart body: a second file part, a file part not named file, a field sent twice, too many parts',
    413: 'Over UPLOAD_MAX_BYTES, a text field over 1 MiB, or text fields together over 2 MiB',
    422: 'Bad version, platform, architecture, or no file',
  })
  async upload(
    @Req() request: Request & AuthenticatedRequest,
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Param('name') name: string,
  ) {
    let artifact;
    try {
      artifact = await this.builds.assertMayUpload(caller, name);
    } catch (error) {
      // Refused before reading the body: drain it so the client still receives the answer.
      request.resume();
      throw error;
    }
    const body = await readMultipart(request, {
      fileField: 'file',
      maxFileBytes: this.registry.uploadMaxBytes,
      tempRoot: uploadTempRoot(this.infrastructure),
    });
    try {
      const { artifact: updated, version, build } = await this.builds.upload(caller, artifact, body);
      return uploadedBuildView(updated, version, build, this.builds.signedUrl(build.storageKey, baseUrl));
    } finally {
      await body.cleanup();
    }
  }

  // Declared before `:name/:version`, which would otherwise take "latest" for a version.
  @Get(':name/latest')
  @Public()
  @ApiOperation({
    summary:
      'The latest build for a platform and architecture: highest version with a match, exact preferred over "all"',
  })
  @ApiOkResponse({ type: LatestBuildDto })
  @ApiErrors({
    400: 'Unknown platform or architecture, or several equally good builds',
    404: 'Unknown artifact, or no build for the platform (named in the message)',
  })
  async latest(@Param('name') name: string, @Query() query: BuildQuery) {
    const { artifact, version, build } = await this.builds.latest(name, {
      platform: query.platform,
      architecture: query.architecture,
    });
    return latestBuildView(artifact, version, build);
  }

  @Get(':name/versions/:version/download')
  @Public()
  @ApiOperation({ summary: 'A signed, time-limited download URL for one build' })
  @ApiOkResponse({ type: BuildDownloadTicketDto })
  @ApiErrors({
    400: 'Several builds match: choose with platform and architecture',
    404: 'Unknown artifact or version, or no build for the platform',
  })
  async downloadUrl(
    @RequestBaseUrl() baseUrl: string,
    @Param('name') name: string,
    @Param('version') version: string,
    @Query() query: BuildQuery,
  ) {
    const { build } = await this.builds.find(name, version, {
      platform: query.platform,
      architecture: query.architecture,
    });
    return buildDownloadTicketView(
      build,
      this.builds.signedUrl(build.storageKey, baseUrl),
      this.builds.signedUrlTtlSeconds,
    );
  }

  @Get(':name/:version')
  @Public()
  @ApiOperation({
    summary:
      'Download a build; platform and architecture may be left out when the version has one build. ETag and ranges supported',
  })
  @ApiFileResponse(
    'The file; Content-Disposition carries its filename, X-Checksum-Sha256 its SHA-256',
    'application/octet-stream',
  )
  @ApiErrors({
    400: 'Several builds match: choose with platform and architecture',
    404: 'Unknown artifact or version, or no build for the platform',
    416: 'Range not satisfiable',
  })
  async download(
    @Req() request: Request,
    // Not passthrough: sendStoredObject ends the response itself (304, 206, 200).
    @Res() response: Response,
    @Param('name') name: string,
    @Param('version') version: string,
    @Query() query: BuildQuery,
  ): Promise<void> {
    const { build } = await this.builds.find(name, version, {
      platform: query.platform,
      architecture: query.architecture,
    });
    await sendStoredObject(request, response, {
      size: build.sizeBytes,
      etag: build.checksumSha256,
      contentType: 'application/octet-stream',
      filename: build.filename,
      headers: { 'X-Checksum-Sha256': build.checksumSha256 },
      open: (range) => this.builds.open(build, range),
      onServed: () => this.builds.countDownload(build.storageKey),
    });
  }
}
