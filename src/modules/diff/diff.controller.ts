import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { RequestBaseUrl } from '../../common/request-base-url.js';
import { ApiErrors, ApiFileResponse } from '../../common/openapi.js';
import { sendStoredObject } from '../../common/send-object.js';
import type { Caller } from '../registry/index.js';
import { CreateDiffDto, createDiffRequestOf } from './diff.dto.js';
import { DiffService, type DiffOutcome } from './diff.service.js';
import { DiffInfoDto, DiffPendingDto } from './diff.responses.js';
import { deltaFileName, diffInfoView, diffPendingView } from './diff.views.js';

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
    description:
      'from_version, to_version and force as a JSON body or as query parameters. 200 with Diff info when the delta exists (unless force), else 202 with the job id.',
  })
  @ApiBody({ type: CreateDiffDto, required: false })
  @ApiOkResponse({ description: 'The delta exists', type: DiffInfoDto })
  @ApiAcceptedResponse({ description: 'Queued', type: DiffPendingDto })
  @ApiErrors({
    400: 'Identical versions, or from newer than to',
    403: 'Not the publisher of the package nor an admin',
    404: 'Unknown package or version, or a package the caller cannot read',
  })
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
    description:
      'recommended is false when the patch is over 80 % of the full file: download the full version instead.',
  })
  @ApiParam({ name: 'from', example: '1.0.0' })
  @ApiParam({ name: 'to', example: '1.1.0' })
  @ApiOkResponse({ description: 'Diff info', type: DiffInfoDto })
  @ApiAcceptedResponse({ description: 'Being generated; ask again (Retry-After)', type: DiffPendingDto })
  @ApiErrors({
    400: 'Identical versions, or from newer than to',
    404: 'Unknown package or version, or a package the caller cannot read',
    503: 'Generating this delta failed recently; download the full version',
  })
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
  @ApiOperation({
    summary:
      'The delta file (TBDELTA1, docs/delta-format.md); ETag, If-None-Match and Range supported; 404 until it exists',
  })
  @ApiParam({ name: 'from', example: '1.0.0' })
  @ApiParam({ name: 'to', example: '1.1.0' })
  @ApiFileResponse('The patch; X-Patch-Checksum carries its SHA-256', 'application/octet-stream')
  @ApiErrors({ 404: 'The delta does not exist yet, or unknown package or version', 416: 'Range not satisfiable' })
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
