import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { LocalMessageBroker, MESSAGE_BROKER, type MessageBroker } from '../../../broker/index.js';
import { PlatformError } from '../../../common/errors.js';
import { GatewayApiKeyEntity } from '../entities/gateway-api-key.entity.js';
import { GATEWAY_TIERS, GatewayUserEntity, type GatewayTier } from '../entities/gateway-user.entity.js';
import { generateGatewayKey } from '../gateway-settings.js';
import { MeteringService } from './metering.service.js';
import type { LedgerRow } from './ledger-store.js';
import { fromMicros, MAX_ADMIN_AMOUNT, MAX_BALANCE_MICROS, toMicros } from './money.js';

export interface GatewayUserView {
  id: string;
  email: string;
  tier: GatewayTier;
  balance: number;
  /** What calls in flight hold of the balance. */
  held: number;
  /** What a new call may hold: balance − held. */
  available: number;
  active: boolean;
  created_at: string;
}

export interface GatewayKeyView {
  id: string;
  name: string;
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/** The user a valid key belongs to, as the guard and the metering see it. */
export interface KeyOwner {
  userId: string;
  keyId: string;
  email: string;
  tier: GatewayTier;
  active: boolean;
}

const KEY_FORMAT = /^sk-tb-[0-9a-f]{48}$/;
const EMAIL_FORMAT = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const KEY_NAME_FORMAT = /^[A-Za-z0-9 ._-]{1,100}$/;
/**
 * How long a verified key is trusted without asking the database again. A change of a user's keys, tier or
 * active flag is announced to every gateway process at once (KEY_CHANGES_TOPIC); this bounds a lost announcement.
 */
const KEY_CACHE_MS = 5_000;
const KEY_CHANGES_TOPIC = 'gateway.key-owner';

export function hashGatewayKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function userView(user: GatewayUserEntity): GatewayUserView {
  return {
    id: user.id,
    email: user.email,
    tier: user.tier,
    balance: fromMicros(user.balanceMicros),
    held: fromMicros(user.heldMicros),
    available: fromMicros(user.balanceMicros - user.heldMicros),
    active: user.active,
    created_at: user.createdAt.toISOString(),
  };
}

function keyView(key: GatewayApiKeyEntity): GatewayKeyView {
  return {
    id: key.id,
    name: key.name,
    key_prefix: key.keyPrefix,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

function badRequest(field: string, message: string): never {
  throw new PlatformError('BAD_REQUEST', message, [{ field, message }]);
}

function unprocessable(field: string, message: string): never {
  throw new PlatformError('UNPROCESSABLE_ENTITY', message, [{ field, message }]);
}

/**
 * An amount an admin gives, in micro-units: a number from `minimum` to {@link MAX_ADMIN_AMOUNT}, rounded to the
 * micro-unit; 422 otherwise (a larger one would not stay exact in the sums, or not fit the column).
 */
function adminAmountMicros(field: string, value: unknown, minimum: 0 | 'above 0'): number {
  const range = minimum === 0 ? `from 0 to ${MAX_ADMIN_AMOUNT}` : `from 0.000001 to ${MAX_ADMIN_AMOUNT}`;
  if (typeof value !== 'number' || !Number.isFinite(value)) unprocessable(field, `${field} must be a number ${range}`);
  const micros = toMicros(value);
  if (micros < (minimum === 0 ? 0 : 1) || micros > MAX_BALANCE_MICROS) {
    unprocessable(field, `${field} must be a number ${range}`);
  }
  return micros;
}

/** Users, their keys (hashed at rest) and their balances; every balance change goes through the ledger (MeteringService.store). */
@Injectable()
export class GatewayAccountsService implements OnModuleInit, OnModuleDestroy {
  private readonly keyCache = new Map<string, { owner: KeyOwner; until: number }>();
  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(
    @InjectRepository(GatewayUserEntity) private readonly users: Repository<GatewayUserEntity>,
    @InjectRepository(GatewayApiKeyEntity) private readonly keys: Repository<GatewayApiKeyEntity>,
    private readonly metering: MeteringService,
    @Optional() @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker = new LocalMessageBroker(),
  ) {}

  /** Key, tier and deactivation changes made by another gateway process (another node) drop its cached keys here. */
  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.broker.subscribe(KEY_CHANGES_TOPIC, (message) =>
      this.forgetCached((message as { userId: string }).userId),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** Whether a user has this address (already normalized: trimmed, lower case). */
  emailRegistered(email: string): Promise<boolean> {
    return this.users.exists({ where: { email } });
  }

  async createUser(input: {
    email?: unknown;
    tier?: unknown;
    balance?: unknown;
    active?: unknown;
  }): Promise<GatewayUserView> {
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    if (!EMAIL_FORMAT.test(email)) badRequest('email', 'email must be an email address');
    const tier = input.tier ?? 'payg';
    if (!GATEWAY_TIERS.includes(tier as GatewayTier))
      badRequest('tier', `tier must be one of ${GATEWAY_TIERS.join(', ')}`);
    const balance = adminAmountMicros('balance', input.balance ?? 0, 0);
    if (input.active !== undefined && typeof input.active !== 'boolean')
      badRequest('active', 'active must be a boolean');
    if (await this.users.exists({ where: { email } }))
      throw new PlatformError('CONFLICT', `A user with email ${email} exists`);
    const user = this.users.create({
      id: randomUUID(),
      email,
      tier: tier as GatewayTier,
      balanceMicros: 0,
      heldMicros: 0,
      active: input.active ?? true,
      createdAt: new Date(),
    });
    await this.users.insert(user);
    if (balance > 0) await this.topUp(user.id, fromMicros(balance), 'initial balance');
    return this.getUser(user.id);
  }

  async listUsers(): Promise<GatewayUserView[]> {
    await this.metering.flush();
    return (await this.users.find({ order: { createdAt: 'ASC', id: 'ASC' } })).map(userView);
  }

  /** Balances include every call this process has settled (the settlement queue is written first). */
  async getUser(id: string): Promise<GatewayUserView> {
    await this.metering.flush();
    return userView(await this.userEntity(id));
  }

  /** Changes tier and active flag; `balance` sets the balance, recorded as an adjustment of the difference. */
  async updateUser(
    id: string,
    patch: { tier?: unknown; active?: unknown; balance?: unknown },
  ): Promise<GatewayUserView> {
    const user = await this.userEntity(id);
    const changes: Partial<GatewayUserEntity> = {};
    if (patch.tier !== undefined) {
      if (!GATEWAY_TIERS.includes(patch.tier as GatewayTier))
        badRequest('tier', `tier must be one of ${GATEWAY_TIERS.join(', ')}`);
      changes.tier = patch.tier as GatewayTier;
    }
    if (patch.active !== undefined) {
      if (typeof patch.active !== 'boolean') badRequest('active', 'active must be a boolean');
      changes.active = patch.active;
    }
    const target = patch.balance === undefined ? undefined : adminAmountMicros('balance', patch.balance, 0);
    if (Object.keys(changes).length > 0) await this.users.update({ id: user.id }, changes);
    if (target !== undefined) {
      // The settled balance is set; holds of calls in flight stay open and their charges follow, so a set
      // during a call neither refunds its hold nor forgets its cost. The difference is read and recorded as an
      // adjustment row inside one transaction.
      await this.metering.flush();
      await this.metering.store.set(id, target, (delta) =>
        this.ledgerRow(id, 'adjustment', delta, 'balance set by an admin'),
      );
    }
    await this.forgetUser(id);
    return this.getUser(id);
  }

  async topUp(id: string, amount: unknown, note: string | null = null): Promise<GatewayUserView> {
    const micros = adminAmountMicros('amount', amount, 'above 0');
    await this.userEntity(id);
    if (!(await this.metering.store.topUp(this.ledgerRow(id, 'topup', micros, note), MAX_BALANCE_MICROS))) {
      unprocessable('amount', `amount would take the balance above ${MAX_ADMIN_AMOUNT}`);
    }
    return this.getUser(id);
  }

  async issueKey(userId: string, name: unknown = 'default'): Promise<{ key: string; info: GatewayKeyView }> {
    await this.userEntity(userId);
    if (typeof name !== 'string' || !KEY_NAME_FORMAT.test(name)) {
      badRequest('name', 'name must be 1 to 100 letters, digits, spaces, ".", "_" or "-"');
    }
    const key = generateGatewayKey();
    const entity = this.keys.create({
      id: randomUUID(),
      userId,
      name,
      keyHash: hashGatewayKey(key),
      keyPrefix: key.slice(0, 14),
      createdAt: new Date(),
      revokedAt: null,
    });
    await this.keys.insert(entity);
    return { key, info: keyView(entity) };
  }

  async listKeys(userId: string): Promise<GatewayKeyView[]> {
    await this.userEntity(userId);
    return (await this.keys.find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } })).map(keyView);
  }

  async revokeKey(userId: string, keyId: string): Promise<GatewayKeyView> {
    const key = await this.keys.findOne({ where: { id: keyId, userId, revokedAt: IsNull() } });
    if (!key) throw new PlatformError('NOT_FOUND', `User ${userId} has no active key ${keyId}`);
    key.revokedAt = new Date();
    await this.keys.update({ id: key.id }, { revokedAt: key.revokedAt });
    await this.forgetUser(userId);
    return keyView(key);
  }

  /**
   * The owner of a user key, or UNAUTHORIZED (unknown, revoked, or its user deactivated). `hash` is the
   * key's {@link hashGatewayKey} when the caller has it already.
   */
  async verifyKey(key: string, hash = hashGatewayKey(key)): Promise<KeyOwner> {
    const unauthorized = () => new PlatformError('UNAUTHORIZED', `Incorrect API key provided: ${key.slice(0, 10)}…`);
    if (!KEY_FORMAT.test(key)) throw unauthorized();
    const cached = this.keyCache.get(hash);
    if (cached && cached.until > Date.now()) return cached.owner;
    const row = await this.keys.findOne({ where: { keyHash: hash, revokedAt: IsNull() } });
    if (!row) throw unauthorized();
    const user = await this.users.findOne({ where: { id: row.userId } });
    if (!user) throw unauthorized();
    if (!user.active) throw new PlatformError('FORBIDDEN', 'This account is deactivated');
    const owner: KeyOwner = { userId: user.id, keyId: row.id, email: user.email, tier: user.tier, active: user.active };
    if (this.keyCache.size > 10_000) this.keyCache.clear();
    this.keyCache.set(hash, { owner, until: Date.now() + KEY_CACHE_MS });
    return owner;
  }

  private ledgerRow(
    userId: string,
    kind: 'topup' | 'adjustment',
    amountMicros: number,
    note: string | null,
  ): LedgerRow {
    return {
      id: randomUUID(),
      userId,
      kind,
      amountMicros,
      heldMicros: 0,
      usageId: null,
      note,
      createdAt: new Date(),
    };
  }

  /** Drops the user's cached keys here and, through the broker, in every other gateway process. */
  private async forgetUser(userId: string): Promise<void> {
    this.forgetCached(userId);
    // Awaited: the admin's answer leaves once Redis has handed the announcement to every subscribed node.
    await this.broker.publish(KEY_CHANGES_TOPIC, { userId }).catch((error: unknown) => {
      new Logger('GatewayAccounts').warn(`could not announce a key change to the other nodes: ${String(error)}`);
    });
  }

  private forgetCached(userId: string): void {
    for (const [hash, entry] of this.keyCache) if (entry.owner.userId === userId) this.keyCache.delete(hash);
  }

  private async userEntity(id: string): Promise<GatewayUserEntity> {
    const user = await this.users.findOne({ where: { id } });
    if (!user) throw new PlatformError('NOT_FOUND', `No user ${id}`);
    return user;
  }
}
