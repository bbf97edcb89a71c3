import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, type Repository } from 'typeorm';
import { ACCESS_LEVEL, isAccessLevel } from '../../auth/access-level.js';
import { Revocations } from '../../auth/shared-store/revocations.js';
import { PlatformError } from '../../common/errors.js';
import { UserIdentityEntity } from './entities/user-identity.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { mergeUserData, type UserDataChanges } from './user-data.js';

/** What a provider says about the person logging in. */
export interface ProviderProfile {
  provider: 'discord' | 'google' | 'magic_link';
  /** The provider's own id of the account (magic link: the e-mail). */
  providerUserId: string;
  email: string | null;
  /** True only when the provider vouches for the e-mail (Google `email_verified`, Discord `verified`, a magic link). */
  emailVerified: boolean;
  username: string | null;
}

export interface LoginOutcome {
  user: UserEntity;
  isNewUser: boolean;
}

/** How long a level change keeps ending older sessions: longer than any cookie session lives. */
const LEVEL_CHANGE_MEMORY_SECONDS = 31 * 24 * 3600;

/**
 * A bare addr-spec, nothing else: a dot-atom local part and a domain of letter/digit/hyphen labels. No display
 * name, angle brackets, comments, quoted parts or lists: `x<victim@example.com>` or `a(b)<victim@…>` would pass a
 * looser check, count against a different per-address limit and still be delivered to the victim by the mail
 * client library, which parses them as addresses.
 */
const ATOM = "[\\p{L}\\p{N}!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,61}[\\p{L}\\p{N}])?';
const EMAIL = new RegExp(`^${ATOM}(?:\\.${ATOM})*@${LABEL}(?:\\.${LABEL})+$`, 'u');

export function newUserId(): string {
  return `usr_${randomBytes(12).toString('hex')}`;
}

export function normalizeEmail(email: string): string {
  const trimmed = email.trim();
  if (trimmed.length > 320 || !EMAIL.test(trimmed))
    throw new PlatformError('BAD_REQUEST', 'A valid e-mail address is required', [
      { field: 'email', message: 'must be an e-mail address' },
    ]);
  return trimmed;
}

/** The platform's users and their linked provider identities. */
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    @InjectRepository(UserIdentityEntity) private readonly identities: Repository<UserIdentityEntity>,
    @Optional() private readonly revocations?: Revocations,
  ) {}

  async create(input: { email: string; username?: string | null; level?: number }): Promise<UserEntity> {
    const email = normalizeEmail(input.email);
    const level = input.level ?? ACCESS_LEVEL.LOGGED_IN;
    if (!isAccessLevel(level)) throw new PlatformError('BAD_REQUEST', 'level must be -1, 0, 1 or 2');
    const username = (input.username?.trim() || email.split('@')[0]).slice(0, 191);
    const user = this.users.create({
      id: newUserId(),
      username,
      email,
      emailKey: emailKey(email),
      level,
      createdAt: new Date(),
      lastLoginAt: null,
      settings: null,
      modData: null,
    });
    try {
      return await this.users.save(user);
    } catch (error) {
      if (isUniqueViolation(error)) throw new PlatformError('CONFLICT', `A user with the e-mail ${email} exists`);
      throw error;
    }
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ emailKey: emailKey(email) });
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<UserEntity[]> {
    return this.users.find({ order: { createdAt: 'ASC', id: 'ASC' }, take: options.limit, skip: options.offset });
  }

  async setLevel(idOrEmail: string, level: number): Promise<UserEntity> {
    if (!isAccessLevel(level)) throw new PlatformError('BAD_REQUEST', 'level must be -1, 0, 1 or 2');
    const user = idOrEmail.includes('@') ? await this.findByEmail(idOrEmail) : await this.findById(idOrEmail);
    if (!user) throw new PlatformError('NOT_FOUND', `No user ${idOrEmail}`);
    if (user.level === level) return user;
    user.level = level;
    const saved = await this.users.save(user);
    // The user's cookie sessions carry the old level: they end, on every worker (a new login gets the new
    // level). Access tokens carry it until they expire (15 min); refreshes read the new one.
    await this.revocations?.revokeUserSessions(user.id, LEVEL_CHANGE_MEMORY_SECONDS);
    return saved;
  }

  /**
   * The owner's own update of `settings`, `mod_data` and `username` (see mergeUserData); nothing else of the
   * record changes. Validated before anything is written.
   */
  async updateOwnData(userId: string, changes: UserDataChanges, maxBytes: number): Promise<UserEntity> {
    const user = await this.findById(userId);
    if (!user) throw new PlatformError('NOT_FOUND', 'User not found');
    const merged = mergeUserData(
      { username: user.username, settings: user.settings ?? {}, modData: user.modData ?? {} },
      changes,
      maxBytes,
    );
    user.username = merged.username;
    user.settings = merged.settings;
    user.modData = merged.modData;
    return this.users.save(user);
  }

  identitiesOf(userId: string): Promise<UserIdentityEntity[]> {
    return this.identities.find({ where: { userId }, order: { createdAt: 'ASC' } });
  }

  /**
   * A login through a provider: the user linked to this provider account; else, only when the provider
   * vouches for the e-mail, the user with that e-mail (and the account is linked to it); else a new user.
   * An unverified e-mail that belongs to someone else never logs into their account (a new user cannot
   * take it either: the e-mail is unique), so that login is refused.
   */
  async login(profile: ProviderProfile): Promise<LoginOutcome> {
    const now = new Date();
    const linked = await this.identities.findOneBy({
      provider: profile.provider,
      providerUserId: profile.providerUserId,
    });
    if (linked) {
      const user = await this.findById(linked.userId);
      if (user) {
        linked.lastLoginAt = now;
        await this.identities.save(linked);
        return { user: await this.touch(user, now), isNewUser: false };
      }
    }
    if (!profile.email) throw new PlatformError('BAD_REQUEST', `${profile.provider} did not share an e-mail address`);
    const byEmail = await this.findByEmail(profile.email);
    if (byEmail && !profile.emailVerified)
      throw new PlatformError(
        'CONFLICT',
        `An account with this e-mail exists; ${profile.provider} has not verified the e-mail, so it cannot be linked`,
      );
    let user = byEmail;
    let isNewUser = false;
    if (!user) {
      try {
        user = await this.create({ email: profile.email, username: profile.username });
        isNewUser = true;
      } catch (error) {
        // Two first logins at once: the other one created the user.
        if (!(error instanceof PlatformError && error.code === 'CONFLICT') || !profile.emailVerified) throw error;
        user = await this.findByEmail(profile.email);
        if (!user) throw error;
      }
    }
    if (profile.provider !== 'magic_link') await this.link(user.id, profile, now);
    return { user: await this.touch(user, now), isNewUser };
  }

  private async link(userId: string, profile: ProviderProfile, now: Date): Promise<void> {
    try {
      await this.identities.insert({
        id: randomUUID(),
        userId,
        provider: profile.provider,
        providerUserId: profile.providerUserId.slice(0, 191),
        email: profile.email,
        createdAt: now,
        lastLoginAt: now,
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }

  /** Notes a login that needed no provider profile (a passkey). */
  recordLogin(user: UserEntity): Promise<UserEntity> {
    return this.touch(user, new Date());
  }

  private async touch(user: UserEntity, now: Date): Promise<UserEntity> {
    await this.users.update({ id: user.id }, { lastLoginAt: now });
    user.lastLoginAt = now;
    return user;
  }
}

function emailKey(email: string): string {
  return email.trim().toLowerCase().slice(0, 191);
}

/** A unique index refused the row (both engines' codes). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driverError = error.driverError as { code?: string; errno?: number } | undefined;
  return (
    driverError?.code === 'ER_DUP_ENTRY' ||
    driverError?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    driverError?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    /UNIQUE constraint failed/.test(error.message)
  );
}
