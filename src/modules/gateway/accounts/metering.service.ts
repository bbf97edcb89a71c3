import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThanOrEqual, type QueryResult } from 'typeorm';
import { PlatformError } from '../../../common/errors.js';
import { GatewayTransactionEntity } from '../entities/gateway-transaction.entity.js';
import { GatewayUsageEntity } from '../entities/gateway-usage.entity.js';
import { GatewayUserEntity } from '../entities/gateway-user.entity.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { GatewaySettingsService } from '../gateway-settings.service.js';
import { costMicros, fromMicros, type TokenPrice } from './money.js';
import { usageByDay } from './usage-by-day.js';

/** A billable call in flight: what was held from the balance, settled by `finish`. */
export interface MeterTicket {
  caller: GatewayCaller;
  endpoint: string;
  model: string;
  price: TokenPrice;
  /** Whether the caller pays per token (PAYG users). */
  charged: boolean;
  heldMicros: number;
  startedAt: number;
  finished: boolean;
}

export interface MeterOutcome {
  promptTokens: number;
  completionTokens: number;
  /** The status answered; 499 when the client went away (billed for what was generated). */
  status: number;
}

/** A settled call waiting to be written: its usage row, and for a PAYG user the balance change and the charge. */
interface Settlement {
  usage: GatewayUsageEntity;
  /** Hold minus exact cost: what goes back to the balance (0 for uncharged callers). */
  balanceDelta: number;
  charge: GatewayTransactionEntity | null;
  heldMicros: number;
}

/** How long a settled call may wait before it is written with the ones that follow it. */
const FLUSH_DELAY_MS = 10;
/** At most this many settlements are written in one database transaction. */
const FLUSH_BATCH = 200;

/**
 * Balances and usage. A PAYG call first holds its likely cost in one conditional UPDATE (`… WHERE
 * balance_micros > 0`, a prepared statement), so parallel calls cannot all pass a check of the same
 * balance. Once the call is answered, the hold is swapped for the exact cost from the runtime's token
 * counts and the usage row (and the charge) is recorded — off the response path: settlements wait at most
 * {@link FLUSH_DELAY_MS} ms and are written in small batches, one transaction each. Every read of balances or
 * usage in this process first waits for the queue (`flush`), and a graceful shutdown writes it before the
 * database closes. Subscribers and the admin are metered but not charged.
 */
@Injectable()
export class MeteringService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('GatewayMetering');
  private readonly holdStatement: string;
  private pending: Settlement[] = [];
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly gateway: GatewaySettingsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    const users = this.dataSource.getMetadata(GatewayUserEntity).tableName;
    this.holdStatement = `UPDATE ${users} SET balance_micros = balance_micros - ? WHERE id = ? AND balance_micros > 0`;
  }

  priceOf(model: string): TokenPrice {
    const settings = this.gateway.settings;
    return settings.model_prices[model] ?? settings.model_prices[model.replace(/:latest$/, '')] ?? settings.prices;
  }

  async begin(
    caller: GatewayCaller,
    call: { endpoint: string; model: string; promptTokensEstimate: number; maxCompletionTokens?: number },
  ): Promise<MeterTicket> {
    const price = this.priceOf(call.model);
    const charged = caller.userId !== null && caller.tier === 'payg';
    let heldMicros = 0;
    if (charged) {
      const reserve = call.maxCompletionTokens ?? this.gateway.settings.reserve_tokens;
      heldMicros = costMicros(price, call.promptTokensEstimate, reserve);
      const runner = this.dataSource.createQueryRunner();
      let held: QueryResult;
      try {
        held = await runner.query(this.holdStatement, [heldMicros, caller.userId], true);
      } finally {
        await runner.release();
      }
      if (!held.affected) {
        throw new PlatformError(
          'PAYMENT_REQUIRED',
          'You exceeded your current quota: your balance is used up. Top up to continue.',
        );
      }
    }
    return {
      caller,
      endpoint: call.endpoint,
      model: call.model,
      price,
      charged,
      heldMicros,
      startedAt: Date.now(),
      finished: false,
    };
  }

  /**
   * Settles a call once (later calls are ignored): queues the release of the hold, the exact charge and
   * the usage row, written within {@link FLUSH_DELAY_MS} ms (at once while the gateway shuts down).
   */
  async finish(ticket: MeterTicket, outcome: MeterOutcome): Promise<void> {
    if (ticket.finished) return;
    ticket.finished = true;
    const succeeded = outcome.status < 400 || outcome.status === 499;
    const cost =
      ticket.charged && succeeded ? costMicros(ticket.price, outcome.promptTokens, outcome.completionTokens) : 0;
    const usageId = randomUUID();
    const userId = ticket.caller.userId;
    const createdAt = new Date();
    const usage: GatewayUsageEntity = {
      id: usageId,
      userId,
      keyId: ticket.caller.keyId,
      endpoint: ticket.endpoint,
      model: ticket.model,
      promptTokens: outcome.promptTokens,
      completionTokens: outcome.completionTokens,
      costMicros: cost,
      latencyMs: createdAt.getTime() - ticket.startedAt,
      status: outcome.status,
      createdAt,
    };
    const charged = ticket.charged && userId !== null;
    this.pending.push({
      usage,
      balanceDelta: charged ? ticket.heldMicros - cost : 0,
      charge:
        charged && cost > 0
          ? {
              id: randomUUID(),
              userId,
              kind: 'charge',
              amountMicros: -cost,
              usageId,
              note: `${ticket.endpoint} ${ticket.model}`,
              createdAt,
            }
          : null,
      heldMicros: ticket.heldMicros,
    });
    if (this.closing || this.pending.length >= FLUSH_BATCH) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes every settlement queued so far; resolves once they are in the database (or logged as failed). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.pending.length > 0 || this.writing) {
      if (this.writing) {
        await this.writing;
        continue;
      }
      const batch = this.pending.splice(0, FLUSH_BATCH);
      this.writing = this.write(batch).finally(() => {
        this.writing = null;
      });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.flush();
  }

  /** One transaction per batch: a balance UPDATE per user, then the charges and usage rows as multi-row INSERTs. */
  private async write(batch: Settlement[]): Promise<void> {
    const deltas = new Map<string, number>();
    for (const { usage, balanceDelta } of batch) {
      if (balanceDelta !== 0 && usage.userId) deltas.set(usage.userId, (deltas.get(usage.userId) ?? 0) + balanceDelta);
    }
    // Users in id order, so two processes settling the same users lock their rows in the same order.
    const users = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const charges = batch.flatMap((settlement) => (settlement.charge ? [settlement.charge] : []));
    const settle = () =>
      this.dataSource.transaction(async (manager) => {
        for (const [userId, delta] of users) {
          await manager.increment(GatewayUserEntity, { id: userId }, 'balanceMicros', delta);
        }
        if (charges.length > 0) await manager.insert(GatewayTransactionEntity, charges);
        await manager.insert(
          GatewayUsageEntity,
          batch.map((settlement) => settlement.usage),
        );
      });
    try {
      // Once more on failure: a lock timeout or deadlock with another writer passes on a second try.
      await settle().catch(() => settle());
    } catch (error) {
      // The answers have been given; a failed settlement is logged with what it was worth, never thrown at a client.
      for (const { usage, heldMicros } of batch) {
        this.logger.error(
          `settling ${usage.endpoint} for user ${usage.userId ?? 'admin'} (hold ${heldMicros}, cost ${usage.costMicros} micros) failed: ${(error as Error).message}`,
        );
      }
    }
  }

  /** A user's usage over the last `days` days, in total and per model. */
  async summary(userId: string, days: number) {
    await this.flush();
    const rows = await this.dataSource.getRepository(GatewayUsageEntity).find({
      where: { userId, createdAt: MoreThanOrEqual(new Date(Date.now() - days * 86_400_000)) },
    });
    const byModel = new Map<
      string,
      { model: string; requests: number; prompt_tokens: number; completion_tokens: number; cost: number }
    >();
    for (const row of rows) {
      const entry = byModel.get(row.model) ?? {
        model: row.model,
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost: 0,
      };
      entry.requests += 1;
      entry.prompt_tokens += row.promptTokens;
      entry.completion_tokens += row.completionTokens;
      entry.cost += row.costMicros;
      byModel.set(row.model, entry);
    }
    const models = [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
    const sum = (pick: (entry: (typeof models)[number]) => number) =>
      models.reduce((total, entry) => total + pick(entry), 0);
    return {
      days,
      requests: sum((entry) => entry.requests),
      prompt_tokens: sum((entry) => entry.prompt_tokens),
      completion_tokens: sum((entry) => entry.completion_tokens),
      cost: fromMicros(sum((entry) => entry.cost)),
      by_model: models.map((entry) => ({ ...entry, cost: fromMicros(entry.cost) })),
      by_day: usageByDay(rows, days).map(({ costMicros: cost, ...day }) => ({ ...day, cost: fromMicros(cost) })),
    };
  }
}
