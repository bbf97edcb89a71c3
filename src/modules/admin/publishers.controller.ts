import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiConflictResponse, ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { PlatformError } from '../../common/errors.js';
import type { Caller } from '../registry/caller.js';
import type { VerificationStatus } from '../registry/entities/publisher.entity.js';
import { PublishersService } from '../registry/publishers.service.js';
import { ListPublishersQuery, SubmitVerificationDto, verificationDataProblems } from './admin.dto.js';
import { publicPublisherView, verificationRequestView } from './admin.views.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

const PUBLISHER_EXAMPLE = {
  id: 'uuid',
  name: 'toolbox-team',
  display_name: 'ToolBox Team',
  verification_status: 'verified',
  homepage: 'https://example.com',
  package_count: 3,
  total_downloads: 120,
  created_at: '2026-01-02T03:04:05.000Z',
};

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
  @ApiOkResponse({ schema: { example: { publishers: [PUBLISHER_EXAMPLE], total: 1, page: 1, per_page: 20 } } })
  async list(@CurrentCaller() caller: Caller, @Query() query: ListPublishersQuery) {
    let statuses: VerificationStatus[] | undefined;
    if (query.verified_only) statuses = query.status && query.status !== 'verified' ? [] : ['verified'];
    else if (query.status) statuses = [query.status];
    const { items, total } = await this.publishers.list({ page: query.page, perPage: query.per_page, statuses });
    const stats = await this.publishers.stats(
      items.map((publisher) => publisher.id),
      caller,
    );
    return {
      publishers: items.map((publisher) => publicPublisherView(publisher, stats.get(publisher.id)!, caller)),
      total,
      page: query.page,
      per_page: query.per_page,
    };
  }

  @Post('verify')
  @Authenticated()
  @HttpCode(202)
  @ApiOperation({ summary: "Ask for the caller's publisher to be verified (unverified or rejected → pending)" })
  @ApiAcceptedResponse({ schema: { example: { status: 'pending', request_id: 'uuid', publisher_id: 'uuid', method: 'github', submitted_at: '…' } } })
  @ApiConflictResponse({ description: 'The publisher is already verified, already pending, or suspended' })
  @ApiForbiddenResponse({ description: 'The caller has no publisher' })
  async submit(@CurrentCaller() caller: Caller, @Body() body: SubmitVerificationDto) {
    const problems = verificationDataProblems(body.method, body.data);
    if (problems.length) throw new PlatformError('UNPROCESSABLE_ENTITY', `Validation failed: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, problems);
    const stored = await this.verification.submit(caller, body.method, body.data);
    return { status: 'pending', request_id: stored.id, publisher_id: stored.publisherId, method: stored.method, submitted_at: stored.submittedAt.toISOString() };
  }

  @Get(':name')
  @Public()
  @ApiOperation({ summary: 'Publisher detail, by name (case-insensitive) or id; admins and the publisher also see its verification requests' })
  @ApiOkResponse({ schema: { example: PUBLISHER_EXAMPLE } })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  async detail(@CurrentCaller() caller: Caller, @Param('name') name: string) {
    const publisher = await this.publishers.findByNameOrId(name);
    if (!publisher) throw new PlatformError('NOT_FOUND', `Publisher "${name}" not found`);
    const stats = (await this.publishers.stats([publisher.id], caller)).get(publisher.id)!;
    const view = publicPublisherView(publisher, stats, caller);
    if (!caller.isAdmin && caller.publisherId !== publisher.id) return view;
    const requests = await this.verification.requestsOf(publisher.id);
    return { ...view, verification_requests: requests.map(verificationRequestView) };
  }
}
