import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { REGISTRY_CONFIG } from '../../config/config.module.js';
import type { RegistryConfig } from '../../config/config.js';
import type { CallerUser, Principal, UserResolver } from '../../auth/principal.js';
import { RegistryAccountEntity } from './entities/registry-account.entity.js';

/**
 * The registry's accounts (table `users`, named apart from WorkerAuth's users): one per platform
 * user, created at the first authenticated request, username and e-mail refreshed from later tokens. Admin comes from the stored flag, REGISTRY_ADMIN_USERS, or the token's
 * ADMIN level.
 */
@Injectable()
export class RegistryAccountsService implements UserResolver {
  private readonly configuredAdmins: Set<string>;

  constructor(
    @InjectRepository(RegistryAccountEntity) private readonly accounts: Repository<RegistryAccountEntity>,
    @Inject(REGISTRY_CONFIG) registry: RegistryConfig,
  ) {
    this.configuredAdmins = new Set(registry.adminUsers);
  }

  async resolve(principal: Principal): Promise<CallerUser> {
    let user = await this.accounts.findOne({ where: { platformUserId: principal.platformUserId } });
    const now = new Date();
    if (!user) {
      user = this.accounts.create({
        id: randomUUID(),
        platformUserId: principal.platformUserId,
        username: principal.username,
        email: principal.email,
        isAdmin: false,
        createdAt: now,
        updatedAt: now,
      });
      try {
        await this.accounts.insert(user);
      } catch (error) {
        // Two first requests at once: the other one created the row.
        const existing = await this.accounts.findOne({ where: { platformUserId: principal.platformUserId } });
        if (!existing) throw error;
        user = existing;
      }
    } else if (user.username !== principal.username || (principal.email !== null && user.email !== principal.email)) {
      user.username = principal.username;
      if (principal.email !== null) user.email = principal.email;
      user.updatedAt = now;
      await this.accounts.update({ id: user.id }, { username: user.username, email: user.email, updatedAt: now });
    }
    return {
      id: user.id,
      platformUserId: user.platformUserId,
      username: user.username,
      email: user.email,
      isAdmin: user.isAdmin || this.configuredAdmins.has(user.platformUserId) || principal.tokenSaysAdmin,
    };
  }

  async findById(id: string): Promise<RegistryAccountEntity | null> {
    return this.accounts.findOne({ where: { id } });
  }

  /** `tb registry admins grant|revoke`: creates the user record when the user has not logged in yet. */
  async setAdmin(platformUserId: string, isAdmin: boolean): Promise<RegistryAccountEntity> {
    const now = new Date();
    let user = await this.accounts.findOne({ where: { platformUserId } });
    if (!user) {
      user = this.accounts.create({
        id: randomUUID(),
        platformUserId,
        username: platformUserId,
        email: null,
        isAdmin,
        createdAt: now,
        updatedAt: now,
      });
      await this.accounts.insert(user);
      return user;
    }
    await this.accounts.update({ id: user.id }, { isAdmin, updatedAt: now });
    return { ...user, isAdmin };
  }
}
