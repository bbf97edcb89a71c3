import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../common/openapi.js';
import type { ManagerProcess } from '../manager-process.js';
import {
  AcceptedDto,
  ManagerHealthDto,
  ManagerMetricsDto,
  ManagerStatusDto,
  ProxyReloadDto,
  RollingUpdateAcceptedDto,
  ScaleDto,
  ScaleResultDto,
  StartedWorkersDto,
  StartWorkersDto,
  StopWorkerDto,
  WorkerIdDto,
  WorkerInfoDto,
  WorkerResultDto,
} from './manager-admin.dto.js';
import { ApiRefusesForms } from './cross-site-forms.js';
import { MANAGER_PROCESS, MANAGER_SHUTDOWN } from './manager-admin.tokens.js';
import { PlatformError } from '../../../common/errors.js';

/** The worker manager's admin API; nginx strips `/admin/manager`, direct callers may keep it, so both prefixes answer. */
@ApiTags('manager')
@ApiSecurity('cluster_secret')
@ApiErrors({ 401: 'No X-Cluster-Secret header', 403: 'Wrong X-Cluster-Secret' })
@Controller(['api', 'admin/manager/api'])
export class ManagerAdminController {
  constructor(
    @Inject(MANAGER_PROCESS) private readonly manager: ManagerProcess,
    @Inject(MANAGER_SHUTDOWN) private readonly shutdown: () => void,
  ) {}

  @Get('status')
  @ApiOperation({ summary: 'Workers keyed by id, broker, nginx, cluster and the rolling update in progress' })
  @ApiOkResponse({ type: ManagerStatusDto })
  status(): Promise<ManagerStatusDto> {
    return this.manager.status();
  }

  @Get('health')
  @ApiOperation({ summary: 'Healthy when every worker is (and there is at least one)' })
  @ApiOkResponse({ type: ManagerHealthDto })
  health(): Promise<ManagerHealthDto> {
    return this.manager.health();
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Totals of the metrics collector (every MANAGER_METRICS_INTERVAL_SECONDS)' })
  @ApiOkResponse({ type: ManagerMetricsDto })
  metrics(): ManagerMetricsDto {
    return this.manager.metricsSummary();
  }

  @Get('workers')
  @ApiOperation({ summary: 'Local workers in start order, then those of healthy cluster nodes' })
  @ApiOkResponse({ type: [WorkerInfoDto] })
  workers(): WorkerInfoDto[] {
    return this.manager.workers();
  }

  @Post('scale')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Scale a worker type to `count` live workers (within the pre-allocated ports)' })
  @ApiOkResponse({ type: ScaleResultDto })
  @ApiErrors({ 400: 'Invalid body', 409: 'Beyond the pre-allocated ports (PORT_RANGE_EXHAUSTED), or an update runs' })
  scale(@Body() body: ScaleDto): Promise<ScaleResultDto> {
    return this.manager.scale(body.type, body.count);
  }

  @Post('rolling-update')
  @ApiRefusesForms()
  @HttpCode(202)
  @ApiOperation({ summary: 'Replace every HTTP worker one by one; progress in GET status (rolling_update)' })
  @ApiAcceptedResponse({ type: RollingUpdateAcceptedDto })
  @ApiErrors({ 409: 'A rolling update is already running' })
  rollingUpdate(): RollingUpdateAcceptedDto {
    return { status: 'accepted', rolling_update: this.manager.startRollingUpdate() };
  }

  @Post('restart')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop every worker (they drain), wait the restart delay, start the initial set again' })
  @ApiOkResponse({ type: StartedWorkersDto })
  @ApiErrors({ 409: 'A restart or rolling update is running' })
  async restart(): Promise<StartedWorkersDto> {
    const { workers } = await this.manager.restartAll();
    return { status: 'ok', workers: workers.map((record) => this.manager.workerInfo(record)) };
  }

  @Post('shutdown')
  @ApiRefusesForms()
  @HttpCode(202)
  @ApiOperation({ summary: 'Stop every worker gracefully, then the manager itself' })
  @ApiAcceptedResponse({ type: AcceptedDto })
  shutdownManager(): AcceptedDto {
    setImmediate(this.shutdown);
    return { status: 'accepted' };
  }

  @Post('workers/start')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Start `count` new workers, or the given id (a stopped or failed one restarts)' })
  @ApiOkResponse({ type: StartedWorkersDto })
  @ApiErrors({ 400: 'Invalid body', 409: 'No free pre-allocated port, or the id runs' })
  async startWorkers(@Body() body: StartWorkersDto): Promise<StartedWorkersDto> {
    if (body.worker_id && body.count !== undefined && body.count !== 1)
      throw new PlatformError('BAD_REQUEST', 'worker_id starts one worker: leave count out');
    if (body.worker_id && !body.worker_id.startsWith(`${body.type}_`))
      throw new PlatformError('BAD_REQUEST', `worker_id of a ${body.type} worker starts with ${body.type}_`);
    const started = [];
    for (let i = 0; i < (body.worker_id ? 1 : (body.count ?? 1)); i++)
      started.push(await this.manager.startWorker(body.type, body.worker_id));
    return { status: 'ok', workers: started.map((record) => this.manager.workerInfo(record)) };
  }

  @Post('workers/stop')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop one worker (drains first unless graceful is false); its entry stays, stopped' })
  @ApiOkResponse({ type: WorkerResultDto })
  @ApiErrors({ 400: 'Invalid body', 404: 'Unknown worker' })
  async stopWorker(@Body() body: StopWorkerDto): Promise<WorkerResultDto> {
    const record = await this.manager.stopWorker(body.worker_id, body.graceful ?? true);
    return { status: 'ok', worker: this.manager.workerInfo(record) };
  }

  @Post('workers/restart')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop, wait the restart delay, start again with the same id and port' })
  @ApiOkResponse({ type: WorkerResultDto })
  @ApiErrors({ 400: 'Invalid body', 404: 'Unknown worker' })
  async restartWorker(@Body() body: WorkerIdDto): Promise<WorkerResultDto> {
    const record = await this.manager.restartWorker(body.worker_id);
    return { status: 'ok', worker: this.manager.workerInfo(record) };
  }

  @Post('nginx/reload')
  @ApiRefusesForms()
  @HttpCode(200)
  @ApiOperation({ summary: '`nginx -t`, then reload (when nginx is set up for this manager)' })
  @ApiOkResponse({ type: ProxyReloadDto })
  async reloadNginx(): Promise<ProxyReloadDto> {
    const result = await this.manager.reloadProxy();
    return { status: result.ok ? 'ok' : 'error', message: result.message };
  }
}
