import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../common/openapi.js';
import { PlatformError } from '../../../common/errors.js';
import { ClusterRegistry } from '../cluster/cluster-registry.js';
import type { ManagerProcess } from '../manager-process.js';
import {
  AcceptedDto,
  ClusterJoinResultDto,
  ClusterNodeDto,
  ClusterServicesDto,
  ClusterVerifyDto,
  JoinClusterDto,
} from './manager-admin.dto.js';
import { ApiRefusesForms } from './cross-site-forms.js';
import { MANAGER_PROCESS } from './manager-admin.tokens.js';

/** The cluster routes of the admin API (docs/workers.md § Cluster). */
@ApiTags('manager cluster')
@ApiSecurity('cluster_secret')
@ApiErrors({ 401: 'No X-Cluster-Secret header', 403: 'Wrong X-Cluster-Secret' })
@Controller(['api/cluster', 'admin/manager/api/cluster'])
export class ManagerClusterController {
  constructor(@Inject(MANAGER_PROCESS) private readonly manager: ManagerProcess) {}

  @Get('verify')
  @ApiOperation({ summary: 'What a joining manager calls: 200 when its X-Cluster-Secret is this manager’s' })
  @ApiOkResponse({ type: ClusterVerifyDto })
  verify(): ClusterVerifyDto {
    return { status: 'ok', instance: this.registry().instance };
  }

  @Get('services')
  @ApiOperation({
    summary: 'Where this node’s registry and MCP transport listen: the nodes that joined it list them as nginx backups',
  })
  @ApiOkResponse({ type: ClusterServicesDto })
  services(): ClusterServicesDto {
    return this.manager.services();
  }

  @Post('join')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Verify a remote manager with the secret, keep it (DATA_DIR/cluster-nodes.json) and poll it',
  })
  @ApiOkResponse({ type: ClusterJoinResultDto })
  @ApiErrors({
    400: 'Invalid body',
    403: 'The remote rejected the secret (nothing stored)',
    409: 'The address is this manager',
    502: 'The remote does not answer, or is no worker manager (CLUSTER_NODE_UNREACHABLE; nothing stored)',
  })
  async join(@Body() body: JoinClusterDto): Promise<ClusterJoinResultDto> {
    return { status: 'ok', node: await this.registry().join(body) };
  }

  @Get('nodes')
  @ApiOperation({ summary: 'The joined nodes with their health and workers' })
  @ApiOkResponse({ type: [ClusterNodeDto] })
  nodes(): ClusterNodeDto[] {
    return this.registry().nodes();
  }

  @Delete('nodes/:id')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Leave a node (id = host:port): its workers leave the nginx backups' })
  @ApiOkResponse({ type: AcceptedDto })
  @ApiErrors({ 404: 'Unknown node' })
  async leave(@Param('id') id: string): Promise<AcceptedDto> {
    await this.registry().leave(id);
    return { status: 'ok' };
  }

  private registry(): ClusterRegistry {
    if (!(this.manager.cluster instanceof ClusterRegistry))
      throw new PlatformError('SERVICE_UNAVAILABLE', 'this manager runs without a cluster registry');
    return this.manager.cluster;
  }
}
