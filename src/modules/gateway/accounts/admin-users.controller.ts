import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../../auth/access.decorators.js';
import {
  CreateGatewayUserDto,
  GatewayKeyDto,
  GatewayUserDto,
  GatewayUserListDto,
  GatewayUserWithKeysDto,
  IssueKeyDto,
  IssuedKeyDto,
  TopUpDto,
  UpdateGatewayUserDto,
  UsageQueryDto,
  UsageSummaryDto,
} from './accounts.dto.js';
import { GatewayAccountsService } from './gateway-accounts.service.js';
import { MeteringService } from './metering.service.js';

/** `/admin/api/users`: users, their keys and balances (admin key only). */
@ApiTags('admin')
@ApiBearerAuth()
@Authenticated({ admin: true })
@Controller('admin/api/users')
export class AdminUsersController {
  constructor(
    private readonly accounts: GatewayAccountsService,
    private readonly metering: MeteringService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Every user' })
  @ApiOkResponse({ type: GatewayUserListDto })
  async list(): Promise<GatewayUserListDto> {
    return { users: await this.accounts.listUsers() };
  }

  @Post()
  @ApiOperation({ summary: 'Create a user (PAYG by default)' })
  @ApiCreatedResponse({ type: GatewayUserDto })
  create(@Body() body: CreateGatewayUserDto): Promise<GatewayUserDto> {
    return this.accounts.createUser(body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One user with their keys' })
  @ApiOkResponse({ type: GatewayUserWithKeysDto })
  async get(@Param('id', ParseUUIDPipe) id: string): Promise<GatewayUserWithKeysDto> {
    return { ...(await this.accounts.getUser(id)), keys: await this.accounts.listKeys(id) };
  }

  @Get(':id/usage')
  @ApiOperation({ summary: 'A user’s usage of the last `days` days, in total and per model (as /user/api/usage)' })
  @ApiOkResponse({ type: UsageSummaryDto })
  async usage(@Param('id', ParseUUIDPipe) id: string, @Query() query: UsageQueryDto): Promise<UsageSummaryDto> {
    await this.accounts.getUser(id);
    return this.metering.summary(id, query.days ?? 30);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change tier, active flag or balance' })
  @ApiOkResponse({ type: GatewayUserDto })
  update(@Param('id', ParseUUIDPipe) id: string, @Body() body: UpdateGatewayUserDto): Promise<GatewayUserDto> {
    return this.accounts.updateUser(id, body);
  }

  @Post(':id/topup')
  @HttpCode(200)
  @ApiOperation({ summary: 'Add to the balance (recorded as a top-up transaction)' })
  @ApiOkResponse({ type: GatewayUserDto })
  topUp(@Param('id', ParseUUIDPipe) id: string, @Body() body: TopUpDto): Promise<GatewayUserDto> {
    return this.accounts.topUp(id, body.amount, body.note ?? null);
  }

  @Post(':id/keys')
  @ApiOperation({ summary: 'Issue a key (sk-tb- + 48 hex), shown once' })
  @ApiCreatedResponse({ type: IssuedKeyDto })
  async issueKey(@Param('id', ParseUUIDPipe) id: string, @Body() body: IssueKeyDto): Promise<IssuedKeyDto> {
    const { key, info } = await this.accounts.issueKey(id, body.name ?? 'default');
    return { ...info, key };
  }

  @Delete(':id/keys/:keyId')
  @ApiOperation({ summary: 'Revoke a key' })
  @ApiOkResponse({ type: GatewayKeyDto })
  revokeKey(
    @Param('id', ParseUUIDPipe) id: string,
    @Param('keyId', ParseUUIDPipe) keyId: string,
  ): Promise<GatewayKeyDto> {
    return this.accounts.revokeKey(id, keyId);
  }
}
