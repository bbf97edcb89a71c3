import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { ACCESS_LEVEL, isAccessLevel } from '../access-level.js';
import { isPermission, PERMISSIONS, type Permission } from '../permissions.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { DISPLAYED_PREFIX_LENGTH, generateApiKey, hashApiKey, isApiKeyFormat, sameHash } from './api-key-secret.js';

/** A key as listings show it: never the key or its hash. */
export interface ApiKeyInfo {
  id: string;
  owner: string;
  name: string;
  keyPrefix: string;
  permissions: Permission[];
  level: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface CreateApiKey {
  owner: string;
  name: string;
  /** Default: read only (the original granted everything when omitted). */
  permissions?: readonly string[];
  /** Default LOGGED_IN. */
  level?: number;
}

const NAME_FORMAT = /^[A-Za-z0-9._-]{1,100}$/;
/** `last_used_at` is written at most this often per key, so verification is not a write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Creates, lists, revokes and verifies API keys (MCP transport, model gateway). */
@Injectable()
export class ApiKeysService {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  /** Returns the plain key once; only its SHA-256 is stored. */
  async create(request: CreateApiKey): Promise<{ key: string; info: ApiKeyInfo }> {
    const owner = request.owner.trim();
    if (!owner || owner.length > 191)
      throw new PlatformError('BAD_REQUEST', 'API key owner must be 1 to 191 characters');
    if (!NAME_FORMAT.test(request.name)) {
      throw new PlatformError(
        'BAD_REQUEST',
        'API key name must be 1 to 100 letters, digits, ".", "_" or "-" (it appears in the revoke path)',
      );
    }
    const permissions = [...new Set(request.permissions ?? ['read'])];
    const unknown = permissions.filter((permission) => !isPermission(permission));
    if (unknown.length > 0)
      throw new PlatformError(
        'BAD_REQUEST',
        `Unknown API key permission(s): ${unknown.join(', ')}; known: ${PERMISSIONS.join(', ')}`,
      );
    const level = request.level ?? ACCESS_LEVEL.LOGGED_IN;
    if (!isAccessLevel(level))
      throw new PlatformError('BAD_REQUEST', `API key level must be one of -1, 0, 1, 2 (got ${level})`);
    if (await this.keys.exists({ where: { owner, name: request.name, revokedAt: IsNull() } })) {
      throw new PlatformError(
        'CONFLICT',
        `An API key named "${request.name}" already exists for ${owner}; revoke it first`,
      );
    }
    const key = generateApiKey();
    const entity = this.keys.create({
      id: randomUUID(),
      owner,
      name: request.name,
      keyHash: hashApiKey(key),
      keyPrefix: key.slice(0, DISPLAYED_PREFIX_LENGTH),
      permissions,
      level,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    });
    await this.keys.insert(entity);
    return { key, info: toInfo(entity) };
  }

  /** Unrevoked keys, oldest first; one owner's when given. */
  async list(options: { owner?: string; includeRevoked?: boolean } = {}): Promise<ApiKeyInfo[]> {
    const rows = await this.keys.find({
      where: {
        ...(options.owner !== undefined ? { owner: options.owner } : {}),
        ...(options.includeRevoked ? {} : { revokedAt: IsNull() }),
      },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return rows.map(toInfo);
  }

  /** Revokes by id, or by owner and name (seed 02: `DELETE /api/keys/{name}`); NOT_FOUND when no such unrevoked key. */
  async revoke(selector: { id: string } | { owner: string; name: string }): Promise<ApiKeyInfo> {
    const where =
      'id' in selector
        ? { id: selector.id, revokedAt: IsNull() }
        : { owner: selector.owner, name: selector.name, revokedAt: IsNull() };
    const row = await this.keys.findOne({ where });
    if (!row)
      throw new PlatformError(
        'NOT_FOUND',
        'id' in selector ? `No API key ${selector.id}` : `No API key named "${selector.name}"`,
      );
    row.revokedAt = new Date();
    await this.keys.update({ id: row.id, revokedAt: IsNull() }, { revokedAt: row.revokedAt });
    return toInfo(row);
  }

  /** The key's record, or UNAUTHORIZED for a malformed, unknown or revoked key. */
  async verify(key: string): Promise<ApiKeyInfo> {
    if (!isApiKeyFormat(key)) throw new PlatformError('UNAUTHORIZED', 'Authentication failed: malformed API key');
    const hash = hashApiKey(key);
    const row = await this.keys.findOne({ where: { keyHash: hash } });
    // The lookup is by hash already; the constant-time comparison keeps the final check free of early exits.
    if (!row || !sameHash(row.keyHash, hash))
      throw new PlatformError('UNAUTHORIZED', 'Authentication failed: unknown API key');
    if (row.revokedAt) throw new PlatformError('UNAUTHORIZED', 'Authentication failed: API key revoked');
    const now = new Date();
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      row.lastUsedAt = now;
      await this.keys.update({ id: row.id }, { lastUsedAt: now });
    }
    return toInfo(row);
  }
}

function toInfo(row: ApiKeyEntity): ApiKeyInfo {
  return {
    id: row.id,
    owner: row.owner,
    name: row.name,
    keyPrefix: row.keyPrefix,
    permissions: row.permissions.filter(isPermission),
    level: row.level,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}
