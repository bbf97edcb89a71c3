import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
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
import { GatewayAuthGuard } from './gateway-auth.guard.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { ModelHubService } from './model-hub.service.js';
import { ModelsService } from './models.service.js';
import { OpenAiController } from './openai.controller.js';

/**
 * The model gateway (seed 03 A): the OpenAI-compatible API over Ollama's native API with content
 * routing; users, keys, usage, balances and per-tier limits; the admin and user APIs (docs/gateway.md).
 * Needs the DatabaseModule and CountersModule of its app.
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
    // In this order: who is calling, then how often they may.
    { provide: APP_GUARD, useClass: GatewayAuthGuard },
    { provide: APP_GUARD, useExisting: GatewayRateLimitGuard },
  ],
  exports: [GatewaySettingsService],
})
export class GatewayModule {}
