import { McpKeyEntity, McpSessionEntity } from '../modules/mcp/mcp-key.entity.js';
import { GatewayApiKeyEntity } from '../modules/gateway/entities/gateway-api-key.entity.js';
import { GatewayLiveSessionEntity } from '../modules/gateway/entities/gateway-live-session.entity.js';
import { GatewaySettingsEntity } from '../modules/gateway/entities/gateway-settings.entity.js';
import { GatewaySignupRequestEntity } from '../modules/gateway/entities/gateway-signup-request.entity.js';
import { GatewayTransactionEntity } from '../modules/gateway/entities/gateway-transaction.entity.js';
import { GatewayUsageEntity } from '../modules/gateway/entities/gateway-usage.entity.js';
import { GatewayUserEntity } from '../modules/gateway/entities/gateway-user.entity.js';
import { AuthStoreEntryEntity } from '../auth/shared-store/auth-store-entry.entity.js';
import { UserEntity } from '../modules/worker-auth/entities/user.entity.js';
import { UserIdentityEntity } from '../modules/worker-auth/entities/user-identity.entity.js';
import { PasskeyEntity } from '../modules/worker-auth/passkeys/passkey.entity.js';
import { QueueJobEntity } from '../queue/queue-job.entity.js';
import { PackageDeltaEntity } from '../modules/diff/entities/package-delta.entity.js';
import { PackageVersionEntity } from '../modules/registry/entities/package-version.entity.js';
import { PackageEntity } from '../modules/registry/entities/package.entity.js';
import { PublisherEntity } from '../modules/registry/entities/publisher.entity.js';
import { RegistryAccountEntity } from '../modules/registry/entities/registry-account.entity.js';
import { AuditEntryEntity } from '../modules/admin/entities/audit-entry.entity.js';
import { VerificationRequestEntity } from '../modules/admin/entities/verification-request.entity.js';
import { ArtifactBuildEntity } from '../modules/artifacts/entities/artifact-build.entity.js';
import { ArtifactVersionEntity } from '../modules/artifacts/entities/artifact-version.entity.js';
import { ArtifactEntity } from '../modules/artifacts/entities/artifact.entity.js';

/** Every entity of the platform, for the one data source (modules still own and export services, not these). */
export const ENTITIES = [
  QueueJobEntity,
  RegistryAccountEntity,
  PublisherEntity,
  PackageEntity,
  PackageVersionEntity,
  PackageDeltaEntity,
  VerificationRequestEntity,
  AuditEntryEntity,
  ArtifactEntity,
  ArtifactVersionEntity,
  ArtifactBuildEntity,
  McpKeyEntity,
  McpSessionEntity,
  GatewayUserEntity,
  GatewayApiKeyEntity,
  GatewayUsageEntity,
  GatewayTransactionEntity,
  GatewaySignupRequestEntity,
  GatewayLiveSessionEntity,
  GatewaySettingsEntity,
  AuthStoreEntryEntity,
  UserEntity,
  UserIdentityEntity,
  PasskeyEntity,
];
