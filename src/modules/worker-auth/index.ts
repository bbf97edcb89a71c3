export { WorkerAuthModule } from './worker-auth.module.js';
export { UsersService, newUserId, normalizeEmail, type ProviderProfile } from './users.service.js';
export { TokensService, type TokenBundle } from './tokens.service.js';
export { UserEntity } from './entities/user.entity.js';
export { UserIdentityEntity } from './entities/user-identity.entity.js';
