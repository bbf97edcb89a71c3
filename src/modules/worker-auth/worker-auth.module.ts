import { Module, type DynamicModule } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { WorkerAuthConfig } from '../../config/config.js';
import { CloudMAuthMod } from './cloudm-auth/cloudm-auth.mod.js';
import { DeviceInvitesService } from './cloudm-auth/device-invites.service.js';
import { UserIdentityEntity } from './entities/user-identity.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { Mailer } from './mailer.js';
import { MagicLinkService } from './magic-link.service.js';
import { OAuthService } from './oauth.service.js';
import { PasskeyEntity } from './passkeys/passkey.entity.js';
import { PasskeyFunctions } from './passkeys/passkey-functions.js';
import { PasskeysService } from './passkeys/passkeys.service.js';
import { TokensService } from './tokens.service.js';
import { UsersService } from './users.service.js';
import { WorkerAuthController } from './worker-auth.controller.js';
import { WORKER_AUTH_CONFIG } from './worker-auth.options.js';

/**
 * WorkerAuth, the platform's identity provider: users, access/refresh tokens, the tb_session
 * cookie, OAuth (Discord, Google), magic links, device invites and the `CloudM.Auth` functions. Needs the DatabaseModule, the CountersModule (request
 * limits) and `AuthModule.forRoot` with the `session-cookie` strategy (SessionCookies, the shared store).
 */
@Module({})
export class WorkerAuthModule {
  static forRoot(config: { workerAuth: WorkerAuthConfig }): DynamicModule {
    return {
      module: WorkerAuthModule,
      imports: [JwtModule.register({}), TypeOrmModule.forFeature([UserEntity, UserIdentityEntity, PasskeyEntity])],
      controllers: [WorkerAuthController],
      providers: [
        { provide: WORKER_AUTH_CONFIG, useValue: config.workerAuth },
        UsersService,
        TokensService,
        Mailer,
        MagicLinkService,
        OAuthService,
        PasskeysService,
        // Passkey functions of CloudM.Auth, served at /api/CloudM.Auth/… by the HTTP worker.
        PasskeyFunctions,
        DeviceInvitesService,
        // The original web client's CloudM.Auth functions (/api/CloudM.Auth/{fn}), on these services.
        CloudMAuthMod,
      ],
      exports: [UsersService, TokensService],
    };
  }
}
