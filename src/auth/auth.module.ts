import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { AuthGuard } from './auth.guard.js';
import { TokenVerifier } from './token-verifier.js';

/** Token verification and the global guards: authentication first, then rate limits (which depend on who the caller is). */
@Global()
@Module({
  imports: [JwtModule.register({})],
  providers: [TokenVerifier, { provide: APP_GUARD, useClass: AuthGuard }],
  exports: [TokenVerifier],
})
export class AuthModule {}
