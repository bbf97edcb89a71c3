import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import { ApiErrors } from '../../common/openapi.js';
import { PageQuery } from '../../common/pagination.js';
import type { Caller } from '../registry/index.js';
import { AdminActionDto } from './admin.dto.js';
import { AdminActionResultDto, PendingPublisherListDto } from './admin.responses.js';
import { adminActionView, pendingPublisherListView } from './admin.views.js';
import type { AdminAction } from './publisher-transitions.js';
import { PublisherVerificationService } from './publisher-verification.service.js';

/**
 * The documented paths under /api/v1/packages/admin, and the same under /api/v1/publishers/admin for the
 * existing client. No registry route has their shape, whatever the module order (see AdminModule).
 */
@ApiTags('admin')
@Authenticated({ admin: true })
@Controller(['api/v1/packages/admin', 'api/v1/publishers/admin'])
@ApiParam({ name: 'publisher_id', required: false, description: 'publisher id (a name is accepted too)' })
export class PublisherAdminController {
  constructor(private readonly verification: PublisherVerificationService) {}

  @Get('pending')
  @ApiOperation({ summary: 'Open verification requests, oldest first, with their method and data (admin)' })
  @ApiOkResponse({ type: PendingPublisherListDto })
  @ApiErrors({ 400: 'Invalid page or per_page' })
  async pending(@CurrentCaller() caller: Caller, @Query() query: PageQuery) {
    const { items, total } = await this.verification.pending(caller, query.page, query.per_page);
    return pendingPublisherListView(items, total, query.page, query.per_page);
  }

  @Post(':publisher_id/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Verify a publisher (pending, unverified or rejected → verified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  verify(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'verify', body);
  }

  @Post(':publisher_id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a verification request (pending → rejected)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  reject(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'reject', body);
  }

  @Post(':publisher_id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a verification (verified → unverified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not allowed from the current status (named in the message)' })
  revoke(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'revoke', body);
  }

  @Post(':publisher_id/suspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Suspend a publisher (any other status → suspended); it can no longer create or upload' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Already suspended' })
  suspend(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'suspend', body);
  }

  @Post(':publisher_id/unsuspend')
  @HttpCode(200)
  @ApiOperation({ summary: 'Lift a suspension (suspended → unverified)' })
  @ApiOkResponse({ type: AdminActionResultDto })
  @ApiErrors({ 404: 'Unknown publisher', 409: 'Not suspended' })
  unsuspend(@CurrentCaller() caller: Caller, @Param('publisher_id') publisherId: string, @Body() body: AdminActionDto) {
    return this.act(caller, publisherId, 'unsuspend', body);
  }

  private async act(caller: Caller, publisherId: string, action: AdminAction, body: AdminActionDto) {
    return adminActionView(await this.verification.transition(caller, publisherId, action, body.notes?.trim() || null));
  }
}
