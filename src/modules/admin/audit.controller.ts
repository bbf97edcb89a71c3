import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import { ListAuditQuery } from './admin.dto.js';
import { ApiErrors } from '../../common/openapi.js';
import { AuditListDto } from './admin.responses.js';
import { auditListView } from './admin.views.js';
import { AuditLogService } from './audit-log.service.js';

@ApiTags('admin')
@Authenticated({ admin: true })
@Controller('api/v1/admin')
export class AuditController {
  constructor(private readonly audit: AuditLogService) {}

  @Get('audit')
  @ApiOperation({ summary: 'The audit log, newest first: admin actions and package deletes (admin)' })
  @ApiOkResponse({ type: AuditListDto })
  @ApiErrors({ 400: 'Invalid page, per_page or filter' })
  async list(@Query() query: ListAuditQuery) {
    const { items, total } = await this.audit.list({
      page: query.page,
      perPage: query.per_page,
      target: query.target,
      targetType: query.target_type,
      action: query.action,
    });
    return auditListView(items, total, query.page, query.per_page);
  }
}
