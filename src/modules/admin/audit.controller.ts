import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../auth/access.decorators.js';
import { ListAuditQuery } from './admin.dto.js';
import { auditEntryView } from './admin.views.js';
import { AuditLogService } from './audit-log.service.js';

@ApiTags('admin')
@Authenticated({ admin: true })
@Controller('api/v1/admin')
export class AuditController {
  constructor(private readonly audit: AuditLogService) {}

  @Get('audit')
  @ApiOperation({ summary: 'The audit log, newest first: admin actions and package deletes (admin)' })
  @ApiOkResponse({
    schema: {
      example: {
        entries: [{ id: 'uuid', actor: 'root', actor_id: 'uuid', action: 'publisher.verify', target_type: 'publisher', target: 'toolbox-team', target_id: 'uuid', notes: 'ok', created_at: '…' }],
        total: 1,
        page: 1,
        per_page: 20,
      },
    },
  })
  async list(@Query() query: ListAuditQuery) {
    const { items, total } = await this.audit.list({ page: query.page, perPage: query.per_page, target: query.target, targetType: query.target_type, action: query.action });
    return { entries: items.map(auditEntryView), total, page: query.page, per_page: query.per_page };
  }
}
