import { Body, Controller, Get, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../auth/access.decorators.js';
import { SignupsService } from './accounts/signups.service.js';
import { PricingDto, PublicModelListDto, SignupDto, SignupRequestDto, UptimeDto } from './admin.dto.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { ModelsService } from './models.service.js';
import { SystemService } from './system.service.js';

/** The landing page's data and the signup form: no key needed (`/health` comes from the HealthModule). */
@ApiTags('landing')
@Public()
@Controller('api')
export class LandingController {
  constructor(
    private readonly models: ModelsService,
    private readonly system: SystemService,
    private readonly signups: SignupsService,
    private readonly settings: GatewaySettingsService,
  ) {}

  @Get('models')
  @ApiOperation({ summary: 'The installed models and their types' })
  @ApiOkResponse({ type: PublicModelListDto })
  async listModels(): Promise<PublicModelListDto> {
    const { data } = await this.models.list();
    return { models: data.map((model) => ({ id: model.id, type: model.type })) };
  }

  @Get('pricing')
  @ApiOperation({ summary: 'Token prices and the requests per minute of each tier, from the configuration' })
  @ApiOkResponse({ type: PricingDto })
  pricing(): PricingDto {
    const { prices, model_prices, rate_limits } = this.settings.settings;
    return { prices, model_prices, rate_limits };
  }

  @Get('uptime')
  @ApiOperation({ summary: 'Since when the gateway runs, and whether the runtime answers' })
  @ApiOkResponse({ type: UptimeDto })
  uptime(): Promise<UptimeDto> {
    return this.system.uptime();
  }

  @Post('signup')
  @ApiOperation({ summary: 'Ask for an account (an admin approves it); 5 an hour per address' })
  @ApiCreatedResponse({ type: SignupDto })
  signup(@Body() body: SignupRequestDto, @Req() request: Request): Promise<SignupDto> {
    return this.signups.request(
      { email: body.email, note: body.note ?? body.message ?? null, requestedTier: body.tier ?? null },
      request.ip ?? 'unknown',
    );
  }
}
