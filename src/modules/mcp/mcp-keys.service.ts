import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { sameHash } from '../../auth/secrets.js';
import { isPermission, PERMISSIONS, type Permission } from '../../auth/permissions.js';
import { PlatformError } from '../../common/errors.js';
import { McpKeyEntity } from './mcp-key.entity.js';
import type { McpPrincipal } from './mcp-permissions.js';

export const MCP_KEY_PREFIX = 'tb_mcp_';
/** `tb_mcp_` and 32 hex characters (128 random bits from the CSPRNG). */
const KEY_FORMAT = /^tb_mcp_[0-9a-f]{32}$/;
const NAME_FORMAT = /^[A-Za-z0-9._-]{1,100}$/;
/** Usage counts and last-use times are written in one batch this often, never on the request's path. */
const USAGE_FLUSH_MS = 5_000;

/** A key as listings show it: never the key or its hash. */
export interface McpKeyInfo {
  name: string;
  key_prefix: string;
  permissions: Permission[];
  created_at: string;
  last_used_at: string | null;
  usage_count: number;
}

export function hashMcpKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Creates, lists, revokes and verifies the MCP transport's API keys; only SHA-256 hashes are stored. */
@Injectable()
export class McpKeysService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('McpKeys');
  private pendingUsage = new Map<string, { count: number; lastUsedAt: Date }>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

  constructor(@InjectRepository(McpKeyEntity) private readonly keys: Repository<McpKeyEntity>) {}

  onModuleInit(): void {
    this.flushTimer = setInterval(() => void this.flushUsage(), USAGE_FLUSH_MS);
    this.flushTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushUsage();
  }

  /** Returns the plain key once. Permissions default to `["read"]` (the original granted all four). */
  async create(name: unknown, permissions: unknown = ['read']): Promise<{ key: string; info: McpKeyInfo }> {
    if (typeof name !== 'string' || !NAME_FORMAT.test(name))
      throw new PlatformError(
        'BAD_REQUEST',
        'name must be 1 to 100 letters, digits, ".", "_" or "-" (it appears in the revoke path)',
      );
    if (!Array.isArray(permissions) || permissions.length === 0)
      throw new PlatformError('BAD_REQUEST', `permissions must be a non-empty list of ${PERMISSIONS.join(', ')}`);
    const unknown = permissions.filter((permission) => !isPermission(permission));
    if (unknown.length > 0)
      throw new PlatformError(
        'BAD_REQUEST',
        `Unknown permission(s): ${unknown.map(String).join(', ')}; known: ${PERMISSIONS.join(', ')}`,
      );
    if (await this.keys.exists({ where: { name } }))
      throw new PlatformError('CONFLICT', `An MCP key named "${name}" already exists; revoke it first`);
    const key = `${MCP_KEY_PREFIX}${randomBytes(16).toString('hex')}`;
    const entity = this.keys.create({
      id: randomUUID(),
      name,
      keyHash: hashMcpKey(key),
      keyPrefix: key.slice(0, MCP_KEY_PREFIX.length + 8),
      permissions: [...new Set(permissions as Permission[])],
      createdAt: new Date(),
      lastUsedAt: null,
      usageCount: 0,
    });
    try {
      await this.keys.insert(entity);
    } catch (error) {
      // Two creations of one name at once: the unique index decides.
      if (await this.keys.exists({ where: { name } }))
        throw new PlatformError('CONFLICT', `An MCP key named "${name}" already exists; revoke it first`);
      throw error;
    }
    return { key, info: toInfo(entity) };
  }

  async list(): Promise<McpKeyInfo[]> {
    await this.flushUsage();
    return (await this.keys.find({ order: { createdAt: 'ASC', name: 'ASC' } })).map(toInfo);
  }

  async count(): Promise<number> {
    return this.keys.count();
  }

  /** Deletes the key (a revoked key is gone: it can never authenticate again); NOT_FOUND when there is none. */
  async revoke(name: string): Promise<void> {
    const result = await this.keys.delete({ name });
    if (!result.affected) throw new PlatformError('NOT_FOUND', `No MCP key named "${name}"`);
    this.pendingUsage.delete(name);
  }

  /** The key's principal, or UNAUTHORIZED for a missing, malformed, unknown or revoked key. */
  async verify(key: string | undefined): Promise<McpPrincipal> {
    if (!key)
      throw new PlatformError('UNAUTHORIZED', 'An MCP API key is required (Authorization: Bearer or X-API-Key)');
    if (!KEY_FORMAT.test(key)) throw new PlatformError('UNAUTHORIZED', 'Malformed MCP API key');
    const hash = hashMcpKey(key);
    const row = await this.keys.findOne({ where: { keyHash: hash } });
    if (!row || !sameHash(row.keyHash, hash)) throw new PlatformError('UNAUTHORIZED', 'Invalid or revoked MCP API key');
    const usage = this.pendingUsage.get(row.name) ?? { count: 0, lastUsedAt: new Date() };
    usage.count += 1;
    usage.lastUsedAt = new Date();
    this.pendingUsage.set(row.name, usage);
    return { keyName: row.name, permissions: row.permissions.filter(isPermission) };
  }

  /**
   * Writes the batched usage counts; a failure is logged and the counts are kept for the next flush. A flush already
   * under way (the timer's) is waited for first, so a listing after it shows every use counted before it began.
   */
  async flushUsage(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.pendingUsage.size === 0) return;
    this.flushing = this.writeUsage().finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async writeUsage(): Promise<void> {
    const batch = this.pendingUsage;
    this.pendingUsage = new Map();
    for (const [name, usage] of batch) {
      try {
        await this.keys
          .createQueryBuilder()
          .update(McpKeyEntity)
          .set({ usageCount: () => `usage_count + ${Math.trunc(usage.count)}`, lastUsedAt: usage.lastUsedAt })
          .where('name = :name', { name })
          .execute();
      } catch (error) {
        this.logger.warn(`could not record the usage of key ${name}: ${(error as Error).message}`);
        const later = this.pendingUsage.get(name);
        this.pendingUsage.set(name, {
          count: usage.count + (later?.count ?? 0),
          lastUsedAt: later?.lastUsedAt ?? usage.lastUsedAt,
        });
      }
    }
  }
}

function toInfo(entity: McpKeyEntity): McpKeyInfo {
  return {
    name: entity.name,
    key_prefix: entity.keyPrefix,
    permissions: entity.permissions.filter(isPermission),
    created_at: entity.createdAt.toISOString(),
    last_used_at: entity.lastUsedAt ? entity.lastUsedAt.toISOString() : null,
    usage_count: Number(entity.usageCount),
  };
}
