import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { PlatformError } from '../../common/errors.js';
import { type Caller, PublishersService, type VerificationStatus } from '../registry/index.js';
import { ApiErrors } from '../../common/openapi.js';
import { ListPublishersQuery, SubmitVerificationDto, verificationDataProblems } from './admin.dto.js';
import { PublisherDetailDto, PublisherListDto, VerificationSubmittedDto } from './admin.responses.js';
import {
  publicPublisherView,
  publisherDetailView,
  publisherListView,
  verificationSubmittedView,
} from './admin.views.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

@ApiTags('publishers')
@Controller('api/v1/publishers')
export class PublishersController {
  constructor(
    private readonly publishers: PublishersService,
    private readonly verification: PublisherVerificationService,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'List publishers by name; package_count and total_downloads count what the caller may see' })
  @ApiOkResponse({ type: PublisherListDto })
  @ApiErrors({ 400: 'Invalid page, per_page or status' })
  async list(@CurrentCaller() caller: Caller, @Query() query: ListPublishersQuery) {
    let statuses: VerificationStatus[] | undefined;
    if (query.verified_only) statuses = query.status && query.status !== 'verified' ? [] : ['verified'];
    else if (query.status) statuses = [query.status];
    const { items, total } = await this.publishers.list({ page: query.page, perPage: query.per_page, statuses });
    const stats = await this.publishers.stats(
      items.map((publisher) => publisher.id),
      caller,
    );
    return publisherListView(items, stats, caller, query.page, query.per_page, total);
  }

  @Post('verify')
  @Authenticated()
  @HttpCode(202)
  @ApiOperation({ summary: "Ask for the caller's publisher to be verified (unverified or rejected → pending)" })
  @ApiAcceptedResponse({ type: VerificationSubmittedDto })
  @ApiErrors({
    403: 'The caller has no publisher',
    409: 'The publisher is already verified, already pending, or suspended',
    422: 'Unknown method, or data the method does not accept',
  })
  async submit(@CurrentCaller() caller: Caller, @Body() body: SubmitVerificationDto) {
    const problems = verificationDataProblems(body.method, body.data);
    if (problems.length)
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `Validation failed: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
        problems,
      );
    const stored = await this.verification.submit(caller, body.method, body.data);
    return verificationSubmittedView(stored);
  }

  @Get(':name')
  @Public()
  @ApiOperation({
    summary:
      'Publisher detail, by name (case-insensitive) or id; admins and the publisher also see its verification requests',
  })
  @ApiOkResponse({ type: PublisherDetailDto })
  @ApiErrors({ 404: 'Unknown publisher' })
  async detail(@CurrentCaller() caller: Caller, @Param('name') name: string) {
    const publisher = await this.publishers.findByNameOrId(name);
    if (!publisher) throw new PlatformError('NOT_FOUND', `Publisher "${name}" not found`);
    const stats = (await this.publishers.stats([publisher.id], caller)).get(publisher.id)!;
    const view = publicPublisherView(publisher, stats, caller);
    if (!caller.isAdmin && caller.publisherId !== publisher.id) return view;
    return publisherDetailView(view, await this.verification.requestsOf(publisher.id));
  }
}
