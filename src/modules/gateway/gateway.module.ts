import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { authStrategyToken } from '../../auth/auth.options.js';
import { CALLER_RESOLVER } from '../../auth/current-caller.decorator.js';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminUsersController } from './accounts/admin-users.controller.js';
import { GatewayAccountsService } from './accounts/gateway-accounts.service.js';
import { GatewayRateLimitGuard } from './accounts/gateway-rate-limit.guard.js';
import { MeteringService } from './accounts/metering.service.js';
import { SignupsService } from './accounts/signups.service.js';
import { UserApiController } from './accounts/user-api.controller.js';
import { AdminModelsController, AdminSignupsController, AdminSystemController } from './admin.controller.js';
import { GatewaySettingsEntity } from './entities/gateway-settings.entity.js';
import { GatewaySignupRequestEntity } from './entities/gateway-signup-request.entity.js';
import { LandingController } from './landing.controller.js';
import { GatewayLiveSessionEntity } from './entities/gateway-live-session.entity.js';
import { LiveSessionsService } from './live/live-sessions.service.js';
import { LiveVoiceSocket } from './live/live-voice.socket.js';
import { LiveController } from './live/live.controller.js';
import { SystemService } from './system.service.js';
import { AudioService } from './audio.service.js';
import { ChatService } from './chat/chat.service.js';
import { EmbeddingsService } from './embeddings.service.js';
import { GatewayApiKeyEntity } from './entities/gateway-api-key.entity.js';
import { GatewayTransactionEntity } from './entities/gateway-transaction.entity.js';
import { GatewayUsageEntity } from './entities/gateway-usage.entity.js';
import { GatewayUserEntity } from './entities/gateway-user.entity.js';
import { GatewayCallerResolver } from './gateway-caller.js';
import { GatewayKeyStrategy } from './gateway-key.strategy.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { ModelHubService } from './model-hub.service.js';
import { ModelsService } from './models.service.js';
import { OpenAiController } from './openai.controller.js';

/**
 * The model gateway: the OpenAI-compatible API over Ollama's native API with content
 * routing; users, keys, usage, balances and per-tier limits; the admin and user APIs (docs/gateway.md).
 * Needs the DatabaseModule, CountersModule and `AuthModule.forRoot({ strategies: ['gateway-key'] })` of its app.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      GatewayUserEntity,
      GatewayApiKeyEntity,
      GatewayUsageEntity,
      GatewayTransactionEntity,
      GatewaySignupRequestEntity,
      GatewayLiveSessionEntity,
      GatewaySettingsEntity,
    ]),
  ],
  controllers: [
    OpenAiController,
    AdminUsersController,
    AdminModelsController,
    AdminSystemController,
    AdminSignupsController,
    UserApiController,
    LandingController,
    LiveController,
  ],
  providers: [
    GatewaySettingsService,
    GatewayAccountsService,
    MeteringService,
    ChatService,
    EmbeddingsService,
    AudioService,
    ModelsService,
    ModelHubService,
    LiveSessionsService,
    LiveVoiceSocket,
    SignupsService,
    SystemService,
    GatewayRateLimitGuard,
    // The gateway's keys, for the one AuthGuard (AuthModule.forRoot({ strategies: ['gateway-key'] }) in the app,
    // imported before this module: who is calling is known before how often they may).
    { provide: authStrategyToken('gateway-key'), useClass: GatewayKeyStrategy },
    { provide: CALLER_RESOLVER, useClass: GatewayCallerResolver },
    { provide: APP_GUARD, useExisting: GatewayRateLimitGuard },
  ],
  exports: [GatewaySettingsService],
})
export class GatewayModule {}
