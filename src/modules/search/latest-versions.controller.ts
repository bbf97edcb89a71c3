import { createHash } from 'node:crypto';
import { Body, Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { Caller } from '../registry/index.js';
import { ApiErrors } from '../../common/openapi.js';
import { LatestVersionsBody, LatestVersionsQuery } from './latest-versions.dto.js';
import { LatestVersionsService } from './latest-versions.service.js';
import { LatestVersionsDto } from './search.responses.js';
import { latestVersionsView } from './search.views.js';

const DESCRIPTION =
  'Latest installable version per package, keyed by each name as sent (matched case-insensitively). Unknown or invisible names are absent; ' +
  'a package without versions, or whose every version is yanked, maps to null; yanked versions are never reported. With no names: every ' +
  'visible package keyed by its name, paged by page/per_page (max 1000), with total. Responses carry an ETag; If-None-Match answers 304.';

@ApiTags('versions')
@Controller('api/v1/versions')
export class LatestVersionsController {
  constructor(private readonly latest: LatestVersionsService) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Batch latest versions (update checks)', description: DESCRIPTION })
  @ApiHeader({ name: 'If-None-Match', required: false })
  @ApiOkResponse({ type: LatestVersionsDto })
  @ApiResponse({ status: 304, description: 'Unchanged since the ETag sent in If-None-Match' })
  @ApiErrors({ 400: 'More than 1000 names, or invalid paging' })
  async get(
    @Req() request: Request,
    @CurrentCaller() caller: Caller,
    @Res() response: Response,
    @Query() query: LatestVersionsQuery,
  ): Promise<void> {
    sendWithEtag(request, response, await this.lookup(caller, query.names ?? [], query.page, query.per_page));
  }

  @Post()
  @Public()
  @ApiOperation({ summary: 'Batch latest versions for long name lists', description: DESCRIPTION })
  @ApiBody({ type: LatestVersionsBody })
  @ApiHeader({ name: 'If-None-Match', required: false })
  @ApiOkResponse({ type: LatestVersionsDto })
  @ApiResponse({ status: 304, description: 'Unchanged since the ETag sent in If-None-Match' })
  @ApiErrors({ 422: 'More than 1000 names, or names not an array of strings' })
  async post(
    @Req() request: Request,
    @CurrentCaller() caller: Caller,
    @Res() response: Response,
    @Body() body: LatestVersionsBody,
  ): Promise<void> {
    sendWithEtag(request, response, await this.lookup(caller, body.names, body.page, body.per_page));
  }

  private async lookup(caller: Caller, names: string[], page: number, perPage: number): Promise<LatestVersionsDto> {
    if (names.length > 0) return latestVersionsView(await this.latest.forNames(caller, names));
    const { versions, total } = await this.latest.all(caller, page, perPage);
    return latestVersionsView(versions, { total, page, perPage });
  }
}

/** A strong ETag over the body the caller would get; the answer depends on who asks, hence Vary. */
function sendWithEtag(request: Request, response: Response, body: object): void {
  const json = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  response.setHeader('ETag', etag);
  response.setHeader('Vary', 'Authorization');
  response.setHeader('Cache-Control', 'no-cache');
  if (matchesEtag(request.headers['if-none-match'], etag)) {
    response.status(304).end();
    return;
  }
  response.status(200).type('application/json').send(json);
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || value.replace(/^W\//, '') === etag;
  });
}
