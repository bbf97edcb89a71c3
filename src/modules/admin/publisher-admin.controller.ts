import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { ApiErrors } from '../../common/openapi.js';
import { PageQuery } from '../../common/pagination.js';
import { CallerService } from '../registry/caller.service.js';
import { AdminActionDto } from './admin.dto.js';
import { AdminActionResultDto, PendingPublisherListDto } from './admin.responses.js';
import { adminActionView, pendingPublisherListView } from './admin.views.js';
import type { AdminAction } from './publisher-transitions.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

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
  @ApiOkResponse({ type: PendingPublisherListDto })
  @ApiErrors({ 400: 'Invalid page or per_page' })
  async pending(@Query() query: PageQuery) {
    const { items, total } = await this.verification.pending(query.page, query.per_page);
    return pendingPublisherListView(items, total, query.page, query.per_page);
  }

  @Post(':publisher_id/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Verify a publisher (pending, unverified or rejected → verified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  verify(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'verify', body);
  }

  @Post(':publisher_id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a verification request (pending → rejected)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  reject(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'reject', body);
  }

  @Post(':publisher_id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a verification (verified → unverified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  revoke(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'revoke', body);
  }

  @Post(':publisher_id/suspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Suspend a publisher (any other status → suspended); it can no longer create or upload' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Already suspended' })
  suspend(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'suspend', body);
  }

  @Post(':publisher_id/unsuspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Lift a suspension (suspended → unverified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not suspended' })
  unsuspend(@Req() request: AuthenticatedRequest, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(request, publisherId, 'unsuspend', body);
  }

  private async act(request: AuthenticatedRequest, publisherId: string, action: AdminAction, body: AdminActionDto) {
    const caller = await this.callers.of(request);
    return adminActionView(await this.verification.transition(caller, publisherId, action, body.notes?.trim() || null));
  }
}
