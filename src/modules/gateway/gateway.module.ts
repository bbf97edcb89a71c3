import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ChatService } from './chat/chat.service.js';
import { EmbeddingsService } from './embeddings.service.js';
import { GatewayAuthGuard } from './gateway-auth.guard.js';
import { GatewaySettingsService } from './gateway-settings.service.js';
import { ModelsService } from './models.service.js';
import { OpenAiController } from './openai.controller.js';

/**
 * The model gateway (seed 03 A): the OpenAI-compatible API over Ollama's native API, with content
 * routing, guarded by the gateway's own keys (docs/gateway.md).
 */
@Module({
  controllers: [OpenAiController],
  providers: [
    GatewaySettingsService,
    ChatService,
    EmbeddingsService,
    ModelsService,
    { provide: APP_GUARD, useClass: GatewayAuthGuard },
  ],
  exports: [GatewaySettingsService],
})
export class GatewayModule {}
