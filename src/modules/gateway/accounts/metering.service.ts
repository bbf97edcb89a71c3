import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThanOrEqual } from 'typeorm';
import { PlatformError } from '../../../common/errors.js';
import { GatewayUsageEntity } from '../entities/gateway-usage.entity.js';
import type { GatewayCaller } from '../gateway-caller.js';
import { GatewaySettingsService } from '../gateway-settings.service.js';
import {
  ledgerStoreFor,
  type LedgerRow,
  type LedgerStore,
  type SettlementBatch,
  type UsageRow,
} from './ledger-store.js';
import { affordableCompletionTokens, costMicros, fromMicros, type TokenPrice } from './money.js';
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
  /**
   * The most completion tokens the hold pays for (the runtime's `num_predict` when the client set no lower
   * `max_tokens`); null when the caller is not charged.
   */
  completionLimit: number | null;
  startedAt: number;
  finished: boolean;
}

export interface MeterOutcome {
  promptTokens: number;
  completionTokens: number;
  /** The status answered; 499 when the client went away (billed for what was generated). */
  status: number;
}

/** A settled call waiting to be written: its usage row and, for a PAYG user, the ledger row closing its hold. */
interface Settlement {
  usage: UsageRow;
  closing: LedgerRow | null;
}

/** At most this many settlements are written in one database transaction. */
const FLUSH_BATCH = 200;

/**
 * How long a settlement waits for its user's next call, which writes it in its hold's transaction, before it is
 * written on its own (with the others that arrived meanwhile). Not in the moments after the response, when the
 * client reads it.
 */
export const SETTLE_DELAY_MS = 5;

/** Settlements are grouped by this name of a model: `m` and `m:latest` are one model. */
export function modelKey(model: string): string {
  return model.replace(/:latest$/, '');
}

function paymentRequired(withMaxTokens: boolean): PlatformError {
  return new PlatformError(
    'PAYMENT_REQUIRED',
    withMaxTokens
      ? 'You exceeded your current quota: your available balance does not cover this call (its prompt and max_tokens). Top up, or ask for fewer tokens.'
      : 'You exceeded your current quota: your balance is used up. Top up to continue.',
  );
}

/**
 * Balances and usage, kept as a ledger (see {@link LedgerStore}). A PAYG call first *holds* its likely cost —
 * prompt estimate plus `max_tokens`, or plus at most `reserve_tokens` — in one conditional write, which succeeds
 * only while the available balance (balance − open holds) covers the hold, so parallel calls in any number of
 * gateway processes cannot spend the same money; the runtime is then told to generate no more than the hold pays
 * for. Once the call is answered, the hold is closed by a `charge` row of the exact cost from the runtime's token
 * counts (or a `release` row when the call failed) with the usage row. That write is off the response path: the
 * user's next call in this process writes it in its hold's transaction when it comes within SETTLE_DELAY_MS, else
 * it is written then with every settlement queued meanwhile. A user's next call waits for that user's settlements
 * being written (and only then), so it never sees a balance a finished call has not settled. Every read of
 * balances or usage in this process first waits for the queue (`flush`), and a graceful shutdown writes it before
 * the database closes. Subscribers and the admin are metered but not charged.
 */
@Injectable()
export class MeteringService implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('GatewayMetering');
  private readonly ledger: LedgerStore;
  private pending: Settlement[] = [];
  /** Users with settlements queued or being written here, and how many. */
  private readonly unsettled = new Map<string, number>();
  private writing: Promise<void> | null = null;
  /** Settlements taken from the queue into a user's hold, until that transaction has ended. */
  private readonly folding = new Map<string, Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly gateway: GatewaySettingsService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.ledger = ledgerStoreFor(this.dataSource);
  }

  /** The store every balance change of the gateway goes through. */
  get store(): LedgerStore {
    return this.ledger;
  }

  priceOf(model: string): TokenPrice {
    const settings = this.gateway.settings;
    return settings.model_prices[model] ?? settings.model_prices[modelKey(model)] ?? settings.prices;
  }

  /**
   * Holds a PAYG call's likely cost, or 402. With `maxCompletionTokens` the whole hold must be covered (a balance
   * that covers N such calls serves N); without it the reserve shrinks to what the available balance covers after
   * the prompt, and the ticket's `completionLimit` says how many tokens that is.
   */
  async begin(
    caller: GatewayCaller,
    call: { endpoint: string; model: string; promptTokensEstimate: number; maxCompletionTokens?: number },
  ): Promise<MeterTicket> {
    const price = this.priceOf(call.model);
    const userId = caller.userId;
    const charged = userId !== null && caller.tier === 'payg';
    let heldMicros = 0;
    let completionLimit: number | null = null;
    if (charged) {
      const prompt = call.promptTokensEstimate;
      const wanted = call.maxCompletionTokens ?? this.gateway.settings.reserve_tokens;
      heldMicros = costMicros(price, prompt, wanted);
      completionLimit = wanted;
      // At least one micro-unit available: a free call still needs a balance that is not used up.
      if (!(await this.holdSettled(this.holdRow(userId, heldMicros, call), Math.max(heldMicros, 1)))) {
        if (call.maxCompletionTokens !== undefined) throw paymentRequired(call.maxCompletionTokens > 0);
        ({ heldMicros, completionLimit } = await this.holdWhatIsLeft(userId, price, call, wanted));
      }
    }
    return {
      caller,
      endpoint: call.endpoint,
      model: call.model,
      price,
      charged,
      heldMicros,
      completionLimit,
      startedAt: Date.now(),
      finished: false,
    };
  }

  /**
   * Takes a hold on the balance the user's finished calls left: their settlements still queued here are written
   * in the hold's own transaction (one round trip), and one already being written is waited for first.
   */
  private async holdSettled(row: LedgerRow, atLeast: number): Promise<boolean> {
    const userId = row.userId;
    // A write in progress, or another call's hold of this user, may be writing some of this user's settlements.
    for (let busy = this.busyFor(userId); busy; busy = this.busyFor(userId)) await busy;
    const mine: Settlement[] = [];
    if (this.unsettled.has(userId)) {
      const others: Settlement[] = [];
      for (const settlement of this.pending) (settlement.closing?.userId === userId ? mine : others).push(settlement);
      this.pending = others;
    }
    if (mine.length === 0) return this.ledger.hold(row, atLeast);
    const folded = this.foldInto(mine, row, atLeast);
    const done: Promise<unknown> = folded
      .catch(() => undefined)
      .finally(() => {
        if (this.folding.get(userId) === done) this.folding.delete(userId);
      });
    this.folding.set(userId, done);
    return folded;
  }

  private busyFor(userId: string): Promise<unknown> | null {
    return this.unsettled.has(userId) ? (this.writing ?? this.folding.get(userId) ?? null) : null;
  }

  /** `mine` and the hold in one transaction; when that fails, `mine` on its own (tried twice, logged), then the hold. */
  private async foldInto(mine: Settlement[], row: LedgerRow, atLeast: number): Promise<boolean> {
    try {
      const held = await this.ledger.settleThenHold(this.batchOf(mine), row, atLeast);
      this.settled(mine);
      return held;
    } catch {
      // Nothing of it was written.
      while (this.writing) await this.writing;
      await this.writeBatch(mine);
      return this.ledger.hold(row, atLeast);
    }
  }

  /** The reserve cut to the available balance: read it, then hold exactly that while it is unchanged. */
  private async holdWhatIsLeft(
    userId: string,
    price: TokenPrice,
    call: { endpoint: string; model: string; promptTokensEstimate: number },
    wanted: number,
  ): Promise<{ heldMicros: number; completionLimit: number }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const funds = await this.ledger.funds(userId);
      if (!funds) break;
      const available = funds.balanceMicros - funds.heldMicros;
      const tokens = affordableCompletionTokens(price, call.promptTokensEstimate, available, wanted);
      // A call that may not generate a single token is no call.
      if (available < 1 || tokens < 1) break;
      const heldMicros = costMicros(price, call.promptTokensEstimate, tokens);
      if (await this.ledger.holdIfAvailable(this.holdRow(userId, heldMicros, call), available)) {
        return { heldMicros, completionLimit: tokens };
      }
    }
    throw paymentRequired(false);
  }

  private holdRow(userId: string, heldMicros: number, call: { endpoint: string; model: string }): LedgerRow {
    return {
      id: randomUUID(),
      userId,
      kind: 'hold',
      amountMicros: 0,
      heldMicros,
      usageId: null,
      note: `${call.endpoint} ${call.model}`,
      createdAt: new Date(),
    };
  }

  /**
   * Settles a call once (later calls are ignored): queues the usage row and the row closing the hold; they are
   * written as soon as the current write (if any) is done, at once while the gateway shuts down.
   */
  async finish(ticket: MeterTicket, outcome: MeterOutcome): Promise<void> {
    if (ticket.finished) return;
    ticket.finished = true;
    const billed = outcome.status < 400 || outcome.status === 499;
    const cost =
      ticket.charged && billed ? costMicros(ticket.price, outcome.promptTokens, outcome.completionTokens) : 0;
    const usageId = randomUUID();
    const userId = ticket.caller.userId;
    const createdAt = new Date();
    const usage: UsageRow = {
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
      billed,
      createdAt,
    };
    const closing: LedgerRow | null =
      ticket.charged && userId !== null
        ? {
            id: randomUUID(),
            userId,
            kind: billed ? 'charge' : 'release',
            amountMicros: -cost,
            heldMicros: -ticket.heldMicros,
            usageId,
            note: `${ticket.endpoint} ${ticket.model}`,
            createdAt,
          }
        : null;
    this.pending.push({ usage, closing });
    if (closing) this.unsettled.set(closing.userId, (this.unsettled.get(closing.userId) ?? 0) + 1);
    if (this.closing || this.pending.length >= FLUSH_BATCH) {
      await this.flush();
    } else {
      // Written with the user's next hold when that comes first, else on its own after SETTLE_DELAY_MS.
      this.timer ??= setTimeout(() => {
        this.timer = null;
        void this.flush();
      }, SETTLE_DELAY_MS);
    }
  }

  /** Writes every settlement queued so far; resolves once they are in the database (or logged as failed). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.pending.length > 0 || this.writing || this.folding.size > 0) {
      if (this.writing) {
        await this.writing;
        continue;
      }
      if (this.pending.length === 0) {
        await Promise.all(this.folding.values());
        continue;
      }
      void this.writeBatch(this.pending.splice(0, FLUSH_BATCH));
    }
  }

  /** Writes `batch` as the one write in progress; resolves once it is written (or logged as failed). */
  private writeBatch(batch: Settlement[]): Promise<void> {
    this.writing = this.write(batch).finally(() => {
      this.writing = null;
      this.settled(batch);
    });
    return this.writing;
  }

  /** The users of `batch` have these settlements behind them. */
  private settled(batch: Settlement[]): void {
    for (const { closing } of batch) {
      if (!closing) continue;
      const left = (this.unsettled.get(closing.userId) ?? 1) - 1;
      if (left > 0) this.unsettled.set(closing.userId, left);
      else this.unsettled.delete(closing.userId);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.flush();
  }

  /** After the HTTP server has closed (no call can take a hold any more): the ledger's own connections go. */
  async onApplicationShutdown(): Promise<void> {
    await this.ledger.close();
  }

  /** One transaction per batch: a balance and holds UPDATE per user, then the ledger and usage rows. */
  private async write(batch: Settlement[]): Promise<void> {
    const settlement = this.batchOf(batch);
    try {
      // Once more on failure: a lock timeout or deadlock with another writer passes on a second try.
      await this.ledger.settle(settlement).catch(() => this.ledger.settle(settlement));
    } catch (error) {
      // The answers have been given; a failed settlement is logged with what it was worth, never thrown at a client.
      // Its holds stay open: the user's available balance stays reduced by them, so nothing is overspent.
      for (const { usage, closing } of batch) {
        this.logger.error(
          `settling ${usage.endpoint} for user ${usage.userId ?? 'admin'} (hold ${-(closing?.heldMicros ?? 0)}, cost ${usage.costMicros} micros) failed: ${(error as Error).message}`,
        );
      }
    }
  }

  /** Per user the sum of their rows (users in id order), the rows, the usage rows. */
  private batchOf(batch: Settlement[]): SettlementBatch {
    const users = new Map<string, { userId: string; amountMicros: number; heldMicros: number }>();
    for (const { closing } of batch) {
      if (!closing) continue;
      const user = users.get(closing.userId) ?? { userId: closing.userId, amountMicros: 0, heldMicros: 0 };
      user.amountMicros += closing.amountMicros;
      user.heldMicros += closing.heldMicros;
      users.set(closing.userId, user);
    }
    return {
      users: [...users.values()]
        .filter((user) => user.amountMicros !== 0 || user.heldMicros !== 0)
        .sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)),
      rows: batch.flatMap(({ closing }) => (closing ? [closing] : [])),
      usage: batch.map(({ usage }) => usage),
    };
  }

  /**
   * A user's usage over the last `days` days: the totals, `by_model` and `by_day` count billed calls (answered,
   * or cut by the client); `failed` counts the calls that failed and were not billed (their tokens as reported).
   */
  async summary(userId: string, days: number) {
    await this.flush();
    const rows = await this.dataSource.getRepository(GatewayUsageEntity).find({
      where: { userId, createdAt: MoreThanOrEqual(new Date(Date.now() - days * 86_400_000)) },
    });
    const billed = rows.filter((row) => row.billed);
    const failed = rows.filter((row) => !row.billed);
    const byModel = new Map<
      string,
      { model: string; requests: number; prompt_tokens: number; completion_tokens: number; cost: number }
    >();
    for (const row of billed) {
      const key = modelKey(row.model);
      const entry = byModel.get(key) ?? { model: key, requests: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };
      // One row for `m` and `m:latest`, named as Ollama lists it once any call used that name.
      if (row.model !== key) entry.model = row.model;
      entry.requests += 1;
      entry.prompt_tokens += row.promptTokens;
      entry.completion_tokens += row.completionTokens;
      entry.cost += row.costMicros;
      byModel.set(key, entry);
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
      failed: {
        requests: failed.length,
        prompt_tokens: failed.reduce((total, row) => total + row.promptTokens, 0),
        completion_tokens: failed.reduce((total, row) => total + row.completionTokens, 0),
      },
      by_model: models.map((entry) => ({ ...entry, cost: fromMicros(entry.cost) })),
      by_day: usageByDay(billed, days).map(({ costMicros: cost, ...day }) => ({ ...day, cost: fromMicros(cost) })),
    };
  }
}
