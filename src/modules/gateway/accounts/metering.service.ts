import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThanOrEqual } from 'typeorm';
import { PlatformError } from '../../../common/errors.js';
import { GatewayTransactionEntity } from '../entities/gateway-transaction.entity.js';
import { GatewayUsageEntity } from '../entities/gateway-usage.entity.js';
import { GatewayUserEntity } from '../entities/gateway-user.entity.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { GatewaySettingsService } from '../gateway-settings.service.js';
import { costMicros, fromMicros, type TokenPrice } from './money.js';

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

/**
 * Balances and usage. A PAYG call first holds its likely cost in one conditional UPDATE (`… WHERE
 * balance_micros > 0`), so parallel calls cannot all pass a check of the same balance; afterwards the
 * hold is swapped for the exact cost from the runtime's token counts in one transaction with the usage
 * row and the charge. Subscribers and the admin are metered but not charged.
 */
@Injectable()
export class MeteringService {
  private readonly logger = new Logger('GatewayMetering');

  constructor(
    private readonly gateway: GatewaySettingsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

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
      const result = await this.dataSource
        .createQueryBuilder()
        .update(GatewayUserEntity)
        .set({ balanceMicros: () => 'balance_micros - :held' })
        .where('id = :id AND balance_micros > 0')
        .setParameters({ id: caller.userId, held: heldMicros })
        .execute();
      if (!result.affected) {
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

  /** Settles a call once (later calls are ignored): releases the hold, charges the exact cost, writes the usage row. */
  async finish(ticket: MeterTicket, outcome: MeterOutcome): Promise<void> {
    if (ticket.finished) return;
    ticket.finished = true;
    const succeeded = outcome.status < 400 || outcome.status === 499;
    const cost =
      ticket.charged && succeeded ? costMicros(ticket.price, outcome.promptTokens, outcome.completionTokens) : 0;
    const usageId = randomUUID();
    const userId = ticket.caller.userId;
    const usage = {
      id: usageId,
      userId,
      keyId: ticket.caller.keyId,
      endpoint: ticket.endpoint,
      model: ticket.model,
      promptTokens: outcome.promptTokens,
      completionTokens: outcome.completionTokens,
      costMicros: cost,
      latencyMs: Date.now() - ticket.startedAt,
      status: outcome.status,
      createdAt: new Date(),
    };
    try {
      // Uncharged callers (subscribers, the admin) only add a usage row: one INSERT, no transaction.
      if (!ticket.charged || !userId) {
        await this.dataSource.getRepository(GatewayUsageEntity).insert(usage);
        return;
      }
      await this.dataSource.transaction(async (manager) => {
        const delta = ticket.heldMicros - cost;
        if (delta !== 0) await manager.increment(GatewayUserEntity, { id: userId }, 'balanceMicros', delta);
        if (cost > 0) {
          await manager.insert(GatewayTransactionEntity, {
            id: randomUUID(),
            userId,
            kind: 'charge',
            amountMicros: -cost,
            usageId,
            note: `${ticket.endpoint} ${ticket.model}`,
            createdAt: new Date(),
          });
        }
        await manager.insert(GatewayUsageEntity, usage);
      });
    } catch (error) {
      // The answer has been given; a failed settlement is logged with what it was worth, never thrown at the client.
      this.logger.error(
        `settling ${ticket.endpoint} for user ${userId ?? 'admin'} (hold ${ticket.heldMicros}, cost ${cost} micros) failed: ${(error as Error).message}`,
      );
    }
  }

  /** A user's usage over the last `days` days, in total and per model. */
  async summary(userId: string, days: number) {
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
    };
  }
}
