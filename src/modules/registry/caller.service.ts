import { Injectable } from '@nestjs/common';
import { isAdmin } from '../../auth/auth.guard.js';
import type { AuthenticatedRequest } from '../../auth/principal.js';
import { ANONYMOUS, type Caller } from './caller.js';
import { PublishersService } from './publishers.service.js';

const CALLER = Symbol('registryCaller');

/** Builds the registry's view of the caller once per request. */
@Injectable()
export class CallerService {
  constructor(private readonly publishers: PublishersService) {}

  async of(request: AuthenticatedRequest): Promise<Caller> {
    const cached = (request as Record<symbol, Caller>)[CALLER];
    if (cached) return cached;
    if (!request.user) return ANONYMOUS;
    const publisher = await this.publishers.findByOwner(request.user.id);
    const caller: Caller = { user: request.user, isAdmin: isAdmin(request), publisherId: publisher?.id ?? null };
    (request as Record<symbol, Caller>)[CALLER] = caller;
    return caller;
  }
}
