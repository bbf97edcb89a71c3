import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { PageQuery } from '../../common/pagination.js';
import { CallerService } from '../registry/caller.service.js';
import { AdminActionDto } from './admin.dto.js';
import { pendingPublisherView } from './admin.views.js';
import type { AdminAction } from './publisher-transitions.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

const ACTION_EXAMPLE = { status: 'success', publisher_id: 'uuid', verification_status: 'verified', notes: 'checked the GitHub account' };

/**
 * Seed paths under /api/v1/packages/admin, and the same under /api/v1/publishers/admin for the
 * existing client. Registered before the registry's `packages/:name/…` routes (see AdminModule).
 */
@ApiTags('admin')
@Authenticated({ admin: true })
@Controller(['api/v1/packages/admin', 'api/v1/publishers/admin'])
@ApiParam({ name: 'publisher_id', required: false, description: 'publisher id (a name is accepted too)' })
export class PublisherAdminController {
  constructor(
    private readonly callers: CallerService,
    private readonly verification: PublisherVerificationService,
  ) {}

  @Get('pending')
  @ApiOperation({ summary: 'Open verification requests, oldest first, with their method and data (admin)' })
  @ApiOkResponse({
    schema: {
      example: {
        publishers: [{ id: 'publisher uuid', name: 'toolbox-team', display_name: 'ToolBox Team', verification_status: 'pending', email: null, homepage: null, package_count: 3, total_downloads: 120, created_at: '…', publisher_id: 'publisher uuid', verification_request_id: 'uuid', request_id: 'uuid', method: 'github', data: { username: 'octocat' }, submitted_at: '…' }],
        total: 1,
        page: 1,
        per_page: 20,
      },
    },
  })
  async pending(@Req() request: AuthenticatedRequest, @Query() query: PageQuery) {
    const { items, total } = await this.verification.pending(await this.callers.of(request), query.page, query.per_page);
    return { publishers: items.map((item) => pendingPublisherView(item.request, item.publisher, item.stats)), total, page: query.page, per_page: query.per_page };
  }

  @Post(':publisher_id/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Verify a publisher (pending, unverified or rejected → verified)' })
  @ApiOkResponse({ schema: { example: ACTION_EXAMPLE } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  verify(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'verify', body);
  }

  @Post(':publisher_id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a verification request (pending → rejected)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'rejected' } } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  reject(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'reject', body);
  }

  @Post(':publisher_id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a verification (verified → unverified)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'unverified' } } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  revoke(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'revoke', body);
  }

  @Post(':publisher_id/suspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Suspend a publisher (any other status → suspended); it can no longer create or upload' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'suspended' } } })
  @ApiConflictResponse({ description: 'Already suspended' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  suspend(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'suspend', body);
  }

  @Post(':publisher_id/unsuspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Lift a suspension (suspended → unverified)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'unverified' } } })
  @ApiConflictResponse({ description: 'Not suspended' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  unsuspend(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'unsuspend', body);
  }

  private async act(request: AuthenticatedRequest, publisherId: string, action: AdminAction, body: AdminActionDto) {
    const caller = await this.callers.of(request);
    const { publisher, notes } = await this.verification.transition(caller, publisherId, action, body.notes?.trim() || null);
    return { status: 'success', publisher_id: publisher.id, verification_status: publisher.verificationStatus, notes };
  }
}
