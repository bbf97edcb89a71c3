import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { PageQuery } from '../../common/pagination.js';
import type { Caller } from '../registry/caller.js';
import { AdminActionDto } from './admin.dto.js';
import { pendingPublisherView } from './admin.views.js';
import type { AdminAction } from './publisher-transitions.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

const ACTION_EXAMPLE = { status: 'success', publisher_id: 'uuid', verification_status: 'verified', notes: 'checked the GitHub account' };

/**
 * Seed paths under /api/v1/packages/admin, and the same under /api/v1/publishers/admin for the
 * existing client. No registry route has their shape, whatever the module order (see AdminModule).
 */
@ApiTags('admin')
@Authenticated({ admin: true })
@Controller(['api/v1/packages/admin', 'api/v1/publishers/admin'])
@ApiParam({ name: 'publisher_id', required: false, description: 'publisher id (a name is accepted too)' })
export class PublisherAdminController {
  constructor(
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
  async pending(@CurrentCaller() caller: Caller, @Query() query: PageQuery) {
    const { items, total } = await this.verification.pending(caller, query.page, query.per_page);
    return { publishers: items.map((item) => pendingPublisherView(item.request, item.publisher, item.stats)), total, page: query.page, per_page: query.per_page };
  }

  @Post(':publisher_id/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Verify a publisher (pending, unverified or rejected → verified)' })
  @ApiOkResponse({ schema: { example: ACTION_EXAMPLE } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  verify(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'verify', body);
  }

  @Post(':publisher_id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a verification request (pending → rejected)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'rejected' } } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  reject(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'reject', body);
  }

  @Post(':publisher_id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a verification (verified → unverified)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'unverified' } } })
  @ApiConflictResponse({ description: 'Not allowed from the current status (named in the message)' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  revoke(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'revoke', body);
  }

  @Post(':publisher_id/suspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Suspend a publisher (any other status → suspended); it can no longer create or upload' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'suspended' } } })
  @ApiConflictResponse({ description: 'Already suspended' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  suspend(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'suspend', body);
  }

  @Post(':publisher_id/unsuspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Lift a suspension (suspended → unverified)' })
  @ApiOkResponse({ schema: { example: { ...ACTION_EXAMPLE, verification_status: 'unverified' } } })
  @ApiConflictResponse({ description: 'Not suspended' })
  @ApiNotFoundResponse({ description: 'Unknown publisher' })
  unsuspend(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'unsuspend', body);
  }

  private async act(caller: Caller, publisherId: string, action: AdminAction, body: AdminActionDto) {
    const { publisher, notes } = await this.verification.transition(caller, publisherId, action, body.notes?.trim() || null);
    return { status: 'success', publisher_id: publisher.id, verification_status: publisher.verificationStatus, notes };
  }
}
