import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated } from '../../auth/access.decorators.js';
import { BodyLimit } from '../../common/request-body.js';
import { GATEWAY_BODY_LIMIT } from './gateway-body-limits.js';
import { SignupsService } from './accounts/signups.service.js';
import {
  AdminModelListDto,
  ApprovedSignupDto,
  ApproveSignupDto,
  AdminKeyDto,
  GatewayConfigDto,
  HubDownloadDto,
  HubFileListDto,
  HubFilesQueryDto,
  HubSearchQueryDto,
  HubSearchResultDto,
  ImportGgufDto,
  LoadModelDto,
  ModelNameDto,
  ModelStateDto,
  SignupDto,
  SignupListDto,
  SignupListQueryDto,
  SystemDto,
} from './admin.dto.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { ModelHubService } from './model-hub.service.js';
import { ModelsService } from './models.service.js';
import { writeNdjson } from './stream-writers.js';
import { SystemService } from './system.service.js';

/** `/admin/api/models`: what the runtime has, what is loaded; load, unload, pull (streamed progress), delete. */
@ApiTags('admin')
@ApiBearerAuth()
@Authenticated({ admin: true })
@Controller('admin/api/models')
export class AdminModelsController {
  constructor(
    private readonly models: ModelsService,
    private readonly hub: ModelHubService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Installed models with type, size, load state and fallback roles; the running ones' })
  @ApiOkResponse({ type: AdminModelListDto })
  list(): Promise<AdminModelListDto> {
    return this.models.adminList();
  }

  @Post('load')
  @HttpCode(200)
  @ApiOperation({ summary: 'Load a model into memory (keep_alive, default 30m)' })
  @ApiOkResponse({ type: ModelStateDto })
  load(@Body() body: LoadModelDto): Promise<ModelStateDto> {
    return this.models.load(body.model, body.keep_alive);
  }

  @Post('unload')
  @HttpCode(200)
  @ApiOperation({ summary: 'Unload a model (keep_alive 0)' })
  @ApiOkResponse({ type: ModelStateDto })
  unload(@Body() body: ModelNameDto): Promise<ModelStateDto> {
    return this.models.unload(body.model);
  }

  @Post('pull')
  @ApiOperation({
    summary:
      'Pull a model; answers NDJSON progress lines ({status, digest, total, completed, percent}) ending in {status:"success"} or {error}',
  })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'NDJSON progress',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  })
  async pull(@Body() body: ModelNameDto, @Res() response: Response): Promise<void> {
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    await writeNdjson(response, this.models.pull(body.model, controller.signal));
  }

  @Get('search-hf')
  @ApiOperation({ summary: 'Search the model hub for GGUF repositories (most downloaded first)' })
  @ApiOkResponse({ type: HubSearchResultDto })
  async searchHub(@Query() query: HubSearchQueryDto): Promise<HubSearchResultDto> {
    return { models: await this.hub.search(query.q, query.limit ?? 20) };
  }

  @Get('hf-files')
  @ApiOperation({ summary: 'The GGUF files of a hub repository, with size and SHA-256' })
  @ApiOkResponse({ type: HubFileListDto })
  async hubFiles(@Query() query: HubFilesQueryDto): Promise<HubFileListDto> {
    return { files: await this.hub.files(query.repo, query.revision) };
  }

  @Post('download-hf')
  @ApiOperation({
    summary:
      'Download a GGUF file from the hub (size limit, SHA-256 check) and create a model from it; NDJSON progress ending in {status:"success"} or {error}',
  })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'NDJSON progress',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  })
  async downloadFromHub(@Body() body: HubDownloadDto, @Res() response: Response): Promise<void> {
    await writeNdjson(response, this.hub.download(body));
  }

  @Post('import-gguf')
  @BodyLimit(GATEWAY_BODY_LIMIT.ggufUpload, { streamed: true })
  @ApiOperation({ summary: 'Upload a GGUF file (multipart: file, name) and create a model from it; NDJSON progress' })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: ImportGgufDto })
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'NDJSON progress',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  })
  async importGguf(@Req() request: Request, @Res() response: Response): Promise<void> {
    await writeNdjson(response, this.hub.importUpload(request));
  }

  @Delete('*name')
  @ApiOperation({ summary: 'Delete an installed model (names may contain "/" and ":")' })
  @ApiOkResponse({ type: ModelStateDto })
  delete(@Param('name') name: string | string[]): Promise<ModelStateDto> {
    return this.models.delete(Array.isArray(name) ? name.join('/') : name);
  }
}

/** `/admin/api/system` and `/admin/api/config`. */
@ApiTags('admin')
@ApiBearerAuth()
@Authenticated({ admin: true })
@Controller('admin/api')
export class AdminSystemController {
  constructor(
    private readonly system: SystemService,
    private readonly settings: GatewaySettingsService,
  ) {}

  @Get('system')
  @ApiOperation({ summary: 'CPU, memory, GPUs, the runtime’s health and the request rates' })
  @ApiOkResponse({ type: SystemDto })
  getSystem(): Promise<SystemDto> {
    return this.system.system();
  }

  @Get('config')
  @ApiOperation({
    summary: 'The gateway configuration (DATA_DIR/gateway/config.json, or the shared database), secrets masked',
  })
  @ApiOkResponse({ type: GatewayConfigDto })
  async getConfig(): Promise<GatewayConfigDto> {
    return (await this.settings.masked()) as unknown as GatewayConfigDto;
  }

  @Post('admin-key')
  @HttpCode(200)
  @ApiOperation({ summary: 'Issue a new admin key (shown once); the old one stops working on every node' })
  @ApiOkResponse({ type: AdminKeyDto })
  async rotateAdminKey(): Promise<AdminKeyDto> {
    return { admin_key: await this.settings.rotateAdminKey() };
  }

  @Put('config')
  @ApiOperation({ summary: 'Replace the configuration (validated whole; admin_key stays)' })
  @ApiBody({ type: GatewayConfigDto })
  @ApiOkResponse({ type: GatewayConfigDto })
  async putConfig(@Body() body: Record<string, unknown>): Promise<GatewayConfigDto> {
    return (await this.settings.update(body, true)) as unknown as GatewayConfigDto;
  }

  @Patch('config')
  @ApiOperation({ summary: 'Change some keys (objects merge one level deep)' })
  @ApiBody({ type: GatewayConfigDto })
  @ApiOkResponse({ type: GatewayConfigDto })
  async patchConfig(@Body() body: Record<string, unknown>): Promise<GatewayConfigDto> {
    return (await this.settings.update(body, false)) as unknown as GatewayConfigDto;
  }
}

/** `/admin/api/signups`: requests for an account, approved (user + first key) or rejected. */
@ApiTags('admin')
@ApiBearerAuth()
@Authenticated({ admin: true })
@Controller('admin/api/signups')
export class AdminSignupsController {
  constructor(private readonly signups: SignupsService) {}

  @Get()
  @ApiOperation({ summary: 'Signup requests, oldest first; filter by status' })
  @ApiOkResponse({ type: SignupListDto })
  async list(@Query() query: SignupListQueryDto): Promise<SignupListDto> {
    return { signups: await this.signups.list(query.status) };
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({ summary: 'Approve: creates the user and their first key (shown once)' })
  @ApiOkResponse({ type: ApprovedSignupDto })
  approve(@Param('id', ParseUUIDPipe) id: string, @Body() body: ApproveSignupDto): Promise<ApprovedSignupDto> {
    return this.signups.approve(id, body);
  }

  @Post(':id/reject')
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a pending request' })
  @ApiOkResponse({ type: SignupDto })
  reject(@Param('id', ParseUUIDPipe) id: string): Promise<SignupDto> {
    return this.signups.reject(id);
  }
}
