import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { PlatformError } from '../../../common/errors.js';
import { COUNTER_STORE, type CounterStore } from '../../../counters/counter-store.js';
import {
  GatewaySignupRequestEntity,
  SIGNUP_STATUSES,
  type SignupStatus,
  type SignupTier,
} from '../entities/gateway-signup-request.entity.js';
import type { GatewayTier } from '../entities/gateway-user.entity.js';
import { GatewayAccountsService, type GatewayKeyView, type GatewayUserView } from './gateway-accounts.service.js';

export interface SignupView {
  id: string;
  email: string;
  note: string | null;
  status: SignupStatus;
  requested_tier: SignupTier | null;
  user_id: string | null;
  created_at: string;
  decided_at: string | null;
}

const SIGNUPS_PER_HOUR = 5;

function view(row: GatewaySignupRequestEntity): SignupView {
  return {
    id: row.id,
    email: row.email,
    note: row.note,
    status: row.status,
    requested_tier: row.requestedTier,
    user_id: row.userId,
    created_at: row.createdAt.toISOString(),
    decided_at: row.decidedAt?.toISOString() ?? null,
  };
}

/** Signup requests: anyone may ask (one pending request per email); an admin approves (user + first key) or rejects. */
@Injectable()
export class SignupsService {
  constructor(
    @InjectRepository(GatewaySignupRequestEntity) private readonly requests: Repository<GatewaySignupRequestEntity>,
    private readonly accounts: GatewayAccountsService,
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
  ) {}

  /**
   * A public route: at most SIGNUPS_PER_HOUR requests per client address, counted across processes. An address
   * that already has an account gets the same answer as a new one (the form must not tell who is registered),
   * but nothing is stored: there is nothing for an admin to approve.
   */
  async request(
    input: { email: string; note: string | null; requestedTier: SignupTier | null },
    clientIp: string,
  ): Promise<SignupView> {
    const hit = await this.counters.increment(`gateway:signup:${clientIp}`, 3_600_000);
    if (hit.count > SIGNUPS_PER_HOUR) {
      throw new PlatformError('RATE_LIMITED', `At most ${SIGNUPS_PER_HOUR} signup requests an hour from one address`);
    }
    const normalized = input.email.trim().toLowerCase();
    if (await this.requests.exists({ where: { email: normalized, status: 'pending' } })) {
      throw new PlatformError('CONFLICT', `A signup request for ${normalized} is already pending`);
    }
    const row = this.requests.create({
      id: randomUUID(),
      email: normalized,
      note: input.note,
      status: 'pending',
      requestedTier: input.requestedTier,
      userId: null,
      createdAt: new Date(),
      decidedAt: null,
    });
    if (await this.accounts.emailRegistered(normalized)) return view(row);
    await this.requests.insert(row);
    return view(row);
  }

  async list(status?: SignupStatus): Promise<SignupView[]> {
    if (status !== undefined && !SIGNUP_STATUSES.includes(status)) {
      throw new PlatformError('BAD_REQUEST', `status must be one of ${SIGNUP_STATUSES.join(', ')}`);
    }
    const rows = await this.requests.find({
      where: status ? { status } : {},
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return rows.map(view);
  }

  async approve(
    id: string,
    grant: { tier?: GatewayTier; balance?: number },
  ): Promise<{ signup: SignupView; user: GatewayUserView; key: string; key_info: GatewayKeyView }> {
    const row = await this.pending(id);
    // Registered since the request was made (an admin created the account directly): close the request
    // rather than leave it pending with an approval that can never succeed.
    if (await this.accounts.emailRegistered(row.email)) {
      await this.requests.update({ id, status: 'pending' }, { status: 'rejected', decidedAt: new Date() });
      throw new PlatformError(
        'CONFLICT',
        `${row.email} is already registered; signup request ${id} is closed as rejected (issue a key to the existing user instead)`,
      );
    }
    const user = await this.accounts.createUser({
      email: row.email,
      tier: grant.tier ?? 'payg',
      balance: grant.balance ?? 0,
    });
    const { key, info } = await this.accounts.issueKey(user.id, 'default');
    await this.requests.update(
      { id, status: 'pending' },
      { status: 'approved', userId: user.id, decidedAt: new Date() },
    );
    return { signup: view(await this.requests.findOneByOrFail({ id })), user, key, key_info: info };
  }

  async reject(id: string): Promise<SignupView> {
    await this.pending(id);
    await this.requests.update({ id, status: 'pending' }, { status: 'rejected', decidedAt: new Date() });
    return view(await this.requests.findOneByOrFail({ id }));
  }

  private async pending(id: string): Promise<GatewaySignupRequestEntity> {
    const row = await this.requests.findOne({ where: { id } });
    if (!row) throw new PlatformError('NOT_FOUND', `No signup request ${id}`);
    if (row.status !== 'pending') throw new PlatformError('CONFLICT', `Signup request ${id} is already ${row.status}`);
    return row;
  }
}
