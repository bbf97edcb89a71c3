import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../../auth/access.decorators.js';
import { CurrentCaller } from '../../../auth/current-caller.decorator.js';
import { PlatformError } from '../../../common/errors.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { GatewayUserWithKeysDto, RateLimitStatusDto, UsageQueryDto, UsageSummaryDto } from './accounts.dto.js';
import { GatewayAccountsService } from './gateway-accounts.service.js';
import { GatewayRateLimitGuard } from './gateway-rate-limit.guard.js';
import { MeteringService } from './metering.service.js';

function userIdOf(caller: GatewayCaller): string {
  if (!caller.userId) throw new PlatformError('BAD_REQUEST', 'The admin key belongs to no user; use a user key');
  return caller.userId;
}

/** `/user/api/…`: the calling key's own account, usage and rate-limit window. */
@ApiTags('user')
@ApiBearerAuth()
@Authenticated()
@Controller('user/api')
export class UserApiController {
  constructor(
    private readonly accounts: GatewayAccountsService,
    private readonly metering: MeteringService,
    private readonly rateLimit: GatewayRateLimitGuard,
  ) {}

  @Get('me')
  @ApiOperation({ summary: 'The caller: tier, balance and keys' })
  @ApiOkResponse({ type: GatewayUserWithKeysDto })
  async me(@CurrentCaller() caller: GatewayCaller): Promise<GatewayUserWithKeysDto> {
    const id = userIdOf(caller);
    return { ...(await this.accounts.getUser(id)), keys: await this.accounts.listKeys(id) };
  }

  @Get('usage')
  @ApiOperation({ summary: 'Usage of the last `days` days, in total and per model' })
  @ApiOkResponse({ type: UsageSummaryDto })
  usage(@CurrentCaller() caller: GatewayCaller, @Query() query: UsageQueryDto): Promise<UsageSummaryDto> {
    return this.metering.summary(userIdOf(caller), query.days ?? 30);
  }

  @Get('ratelimit')
  @ApiOperation({ summary: 'The caller’s per-minute request window' })
  @ApiOkResponse({ type: RateLimitStatusDto })
  async ratelimit(@CurrentCaller() caller: GatewayCaller): Promise<RateLimitStatusDto> {
    const status = await this.rateLimit.status(userIdOf(caller), caller.tier);
    return { tier: caller.tier, limit: status.limit, remaining: status.remaining, used: status.used };
  }
}
