import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LessThan, MoreThan, type Repository } from 'typeorm';
import { McpSessionEntity } from './mcp-key.entity.js';

export const MCP_SESSION_STORE = Symbol('MCP_SESSION_STORE');

export interface McpSession {
  id: string;
  keyName: string;
  protocolVersion: string;
}

/**
 * Sessions opened by `initialize` on either door, shared by every process of the service (Redis when
 * configured, the database otherwise): an idle session expires, and past the cap the least recently
 * active one is dropped.
 */
export interface McpSessionStore {
  readonly driver: 'redis' | 'database';
  open(keyName: string, protocolVersion: string): Promise<McpSession>;
  /** The session, with its idle timer restarted; undefined when unknown, ended or expired. */
  touch(id: string): Promise<McpSession | undefined>;
  /** Whether a session was ended. */
  close(id: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface SessionLimits {
  idleMs: number;
  maxSessions: number;
}

function newSessionId(): string {
  return randomBytes(24).toString('hex');
}

export class RedisMcpSessionStore implements McpSessionStore {
  readonly driver = 'redis' as const;
  private readonly index: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: SessionLimits,
  ) {
    this.index = `${prefix}:mcp:sessions`;
  }

  private key(id: string): string {
    return `${this.prefix}:mcp:session:${id}`;
  }

  async open(keyName: string, protocolVersion: string): Promise<McpSession> {
    const session = { id: newSessionId(), keyName, protocolVersion };
    const now = Date.now();
    await this.redis
      .multi()
      .set(this.key(session.id), JSON.stringify(session), 'PX', this.limits.idleMs)
      .zadd(this.index, now, session.id)
      .zremrangebyscore(this.index, '-inf', now - this.limits.idleMs)
      .exec();
    const excess = (await this.redis.zcard(this.index)) - this.limits.maxSessions;
    if (excess > 0) {
      const oldest = await this.redis.zrange(this.index, 0, excess - 1);
      if (oldest.length > 0)
        await this.redis
          .multi()
          .zrem(this.index, ...oldest)
          .del(...oldest.map((id) => this.key(id)))
          .exec();
    }
    return session;
  }

  async touch(id: string): Promise<McpSession | undefined> {
    const results = await this.redis.multi().get(this.key(id)).pexpire(this.key(id), this.limits.idleMs).exec();
    const text = results?.[0]?.[1];
    if (typeof text !== 'string') return undefined;
    await this.redis.zadd(this.index, Date.now(), id);
    return JSON.parse(text) as McpSession;
  }

  async close(id: string): Promise<boolean> {
    const results = await this.redis.multi().del(this.key(id)).zrem(this.index, id).exec();
    return Number(results?.[0]?.[1] ?? 0) > 0;
  }

  async count(): Promise<number> {
    await this.redis.zremrangebyscore(this.index, '-inf', Date.now() - this.limits.idleMs);
    return this.redis.zcard(this.index);
  }
}

export class DatabaseMcpSessionStore implements McpSessionStore {
  readonly driver = 'database' as const;
  /** Sessions are touched at most this often, so a busy client is not a write per request. */
  private readonly touchResolutionMs: number;

  constructor(
    private readonly sessions: Repository<McpSessionEntity>,
    private readonly limits: SessionLimits,
  ) {
    this.touchResolutionMs = Math.min(60_000, Math.max(1, Math.floor(limits.idleMs / 10)));
  }

  async open(keyName: string, protocolVersion: string): Promise<McpSession> {
    const now = new Date();
    const session = { id: newSessionId(), keyName, protocolVersion };
    await this.sessions.delete({ lastSeenAt: LessThan(new Date(now.getTime() - this.limits.idleMs)) });
    await this.sessions.insert({ ...session, createdAt: now, lastSeenAt: now });
    const excess = (await this.sessions.count()) - this.limits.maxSessions;
    if (excess > 0) {
      const oldest = await this.sessions.find({ select: { id: true }, order: { lastSeenAt: 'ASC' }, take: excess });
      await this.sessions.delete(oldest.map((row) => row.id));
    }
    return session;
  }

  async touch(id: string): Promise<McpSession | undefined> {
    const row = await this.sessions.findOne({ where: { id } });
    const now = Date.now();
    if (!row) return undefined;
    if (row.lastSeenAt.getTime() <= now - this.limits.idleMs) {
      await this.sessions.delete({ id });
      return undefined;
    }
    if (now - row.lastSeenAt.getTime() >= this.touchResolutionMs)
      await this.sessions.update({ id }, { lastSeenAt: new Date(now) });
    return { id: row.id, keyName: row.keyName, protocolVersion: row.protocolVersion };
  }

  async close(id: string): Promise<boolean> {
    return Boolean((await this.sessions.delete({ id })).affected);
  }

  async count(): Promise<number> {
    return this.sessions.count({ where: { lastSeenAt: MoreThan(new Date(Date.now() - this.limits.idleMs)) } });
  }
}
