import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import { sendStoredObject } from '../../common/send-object.js';
import type { Caller } from '../registry/caller.js';
import { CreateDiffDto, createDiffRequestOf } from './diff.dto.js';
import { DiffService, type DiffOutcome } from './diff.service.js';
import { deltaFileName, diffInfoView, diffPendingView } from './diff.views.js';

const DIFF_INFO_EXAMPLE = {
  status: 'ready',
  package_name: 'CloudM',
  from_version: '1.0.0',
  to_version: '1.1.0',
  format: 'tbdelta/1',
  patch_size: 2048,
  full_size: 524288,
  compression_ratio: 0.00390625,
  recommended: true,
  patch_storage_path: 'deltas/7f0c…/1.0.0-1.1.0-3b1e9a0c4d2f.tbdelta',
  patch_checksum: '3b1e9a0c4d2f…',
  changed_files: 1,
  added_files: 0,
  deleted_files: 0,
  kept_files: 41,
  exact_rebuild: true,
  created_at: '2026-01-02T03:04:05.000Z',
  download_url: 'http://localhost:4025/api/v1/packages/CloudM/diff/1.0.0/1.1.0/download',
};

const PENDING_EXAMPLE = {
  status: 'pending',
  job_id: 'diff.generate:…',
  package_name: 'CloudM',
  from_version: '1.0.0',
  to_version: '1.1.0',
  info_url: 'http://localhost:4025/api/v1/packages/CloudM/diff/1.0.0/1.1.0',
};

/** Seconds a client should wait before asking again about a queued delta. */
const PENDING_RETRY_AFTER_SECONDS = 2;

@ApiTags('diff')
@Controller('api/v1/packages/:name/diff')
@ApiParam({ name: 'name', description: 'package name' })
export class DiffController {
  constructor(private readonly diffs: DiffService) {}

  @Post('create')
  @Authenticated()
  @ApiOperation({
    summary: 'Pre-generate the delta between two versions (publisher of the package or admin)',
    description: 'from_version, to_version and force as a JSON body or as query parameters. 200 with Diff info when the delta exists (unless force), else 202 with the job id.',
  })
  @ApiBody({ type: CreateDiffDto, required: false })
  @ApiOkResponse({ description: 'The delta exists', schema: { example: DIFF_INFO_EXAMPLE } })
  @ApiAcceptedResponse({ description: 'Queued', schema: { example: PENDING_EXAMPLE } })
  @ApiBadRequestResponse({ description: 'Identical versions, or from newer than to' })
  @ApiForbiddenResponse({ description: 'Not the publisher of the package nor an admin' })
  @ApiNotFoundResponse({ description: 'Unknown package or version, or a package the caller cannot read' })
  async create(
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Res({ passthrough: true }) response: Response,
    @Param('name') name: string,
    @Body() body: CreateDiffDto,
    @Query() query: CreateDiffDto,
  ) {
    const outcome = await this.diffs.create(caller, name, createDiffRequestOf(body, query));
    return this.respond(baseUrl, response, outcome);
  }

  @Get(':from/:to')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Diff info between two versions; builds the delta now when both files are small, else queues it (202)',
    description: 'recommended is false when the patch is over 80 % of the full file: download the full version instead.',
  })
  @ApiParam({ name: 'from', example: '1.0.0' })
  @ApiParam({ name: 'to', example: '1.1.0' })
  @ApiOkResponse({ description: 'Diff info', schema: { example: DIFF_INFO_EXAMPLE } })
  @ApiAcceptedResponse({ description: 'Being generated; ask again (Retry-After)', schema: { example: PENDING_EXAMPLE } })
  @ApiBadRequestResponse({ description: 'Identical versions, or from newer than to' })
  @ApiNotFoundResponse({ description: 'Unknown package or version, or a package the caller cannot read' })
  @ApiServiceUnavailableResponse({ description: 'Generating this delta failed recently; download the full version' })
  async info(
    @CurrentCaller() caller: Caller,
    @RequestBaseUrl() baseUrl: string,
    @Res({ passthrough: true }) response: Response,
    @Param('name') name: string,
    @Param('from') from: string,
    @Param('to') to: string,
  ) {
    return this.respond(baseUrl, response, await this.diffs.info(caller, name, from, to));
  }

  @Get(':from/:to/download')
  @Public()
  @ApiOperation({ summary: 'The delta file (TBDELTA1, docs/delta-format.md); ETag, If-None-Match and Range supported; 404 until it exists' })
  @ApiParam({ name: 'from', example: '1.0.0' })
  @ApiParam({ name: 'to', example: '1.1.0' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The patch; X-Patch-Checksum carries its SHA-256' })
  @ApiNotFoundResponse({ description: 'The delta does not exist yet, or unknown package or version' })
  async download(
    @Req() request: Request & AuthenticatedRequest,
    @CurrentCaller() caller: Caller,
    // Not passthrough: sendStoredObject ends the response itself (304, 206, 200), Nest must not reply again.
    @Res() response: Response,
    @Param('name') name: string,
    @Param('from') from: string,
    @Param('to') to: string,
  ) {
    const { pkg, delta } = await this.diffs.findReady(caller, name, from, to);
    await sendStoredObject(request, response, {
      size: delta.patchSize ?? 0,
      etag: delta.patchChecksum ?? '',
      contentType: 'application/octet-stream',
      filename: deltaFileName(pkg, delta),
      headers: { 'X-Patch-Checksum': delta.patchChecksum ?? '' },
      open: (range) => this.diffs.open(delta, range),
    });
  }

  private respond(baseUrl: string, response: Response, outcome: DiffOutcome) {
    if (outcome.state === 'ready') {
      response.status(200);
      return diffInfoView(outcome.pkg, outcome.delta, baseUrl);
    }
    response.status(202);
    response.setHeader('Retry-After', String(PENDING_RETRY_AFTER_SECONDS));
    return diffPendingView(outcome.pkg, outcome.fromVersion, outcome.toVersion, outcome.jobId, baseUrl);
  }
}
