import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { costMicros } from '../../../src/modules/gateway/accounts/money.js';
import { backends } from '../../support/backends.js';
import { compileSourcesFor, startTb, type TbProcess } from '../../support/child-processes.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';
import { seededRandom } from '../../support/seeded-random.js';

/**
 * The ledger under a randomized concurrent workload: 1,000 operations — chats with and without `max_tokens`,
 * streams (some left by the client midway, some breaking upstream), calls the runtime fails, top-ups, admin
 * sets and key revocations — spread over two gateway processes (this one and a `tb gateway` child) sharing
 * one database (MySQL, or one SQLite file). Afterwards every user's ledger sums to the balance with no hold
 * left open, no balance went below the documented bound, every 2xx was billed exactly by the runtime's token
 * counts, every failure was released unbilled, and a balance for N calls with `max_tokens` serves N across
 * both processes.
 *
 * Prompts are three-letter words, so the gateway's estimate (characters / 4) is exactly the fake runtime's
 * count (its words) and a call cannot overdraw: the only way below zero is an admin setting a balance under
 * what calls in flight then cost.
 */

const PRICE = { input_per_1k: 1, output_per_1k: 2 };
const RESERVE_TOKENS = 16;
const OPERATIONS = 1000;
const CONCURRENCY = 16;
const WORDS = ['abc', 'def', 'ghi', 'jkl', 'mno', 'pqr', 'stu', 'vwx'];

interface User {
  id: string;
  balance: number;
}
interface Account {
  id: string;
  keys: string[];
  inFlight: number;
  /** How far below zero the balance may go: the holds calls had open when an admin set it, summed. */
  allowedOverdraftMicros: number;
}
interface Answered {
  userId: string;
  /** A stream the client left midway: billed for what was generated (499), or in full (200) if it had ended. */
  left?: boolean;
  promptTokens: number;
  completionTokens: number;
}

/** The most a call of this workload may hold: the longest prompt and the largest completion allowance. */
const MAX_HOLD_MICROS = costMicros(PRICE, 6, RESERVE_TOKENS);

async function post(baseUrl: string, path: string, key: string, body: unknown, signal?: AbortSignal) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads an SSE stream to its end; the final usage chunk, if any. */
async function readStream(response: Response, leaveAfterChunks?: number, abort?: AbortController) {
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  let chunks = 0;
  let buffered = '';
  const decoder = new TextDecoder();
  try {
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(piece, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.replace(/^data: /, '');
        if (data === '[DONE]') continue;
        const parsed = JSON.parse(data) as { usage?: typeof usage | null; error?: unknown };
        if (parsed.error) return { usage: undefined, failed: true };
        if (parsed.usage) usage = parsed.usage;
        chunks += 1;
        if (leaveAfterChunks !== undefined && chunks >= leaveAfterChunks) {
          abort?.abort();
          return { usage: undefined, failed: false };
        }
      }
    }
  } catch {
    return { usage: undefined, failed: !abort?.signal.aborted };
  }
  return { usage, failed: usage === undefined };
}

describe.each(backends())('gateway ledger under a concurrent workload ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let child: TbProcess;
  let compiled: string;
  let childUrl = '';

  beforeAll(async () => {
    gateway = await startGateway(backend, {
      settings: {
        prices: PRICE,
        reserve_tokens: RESERVE_TOKENS,
        rate_limits: { payg: 1_000_000, sub: 1_000_000 },
      },
    });
    compiled = await mkdtemp(join(tmpdir(), 'tb-ledger-workload-'));
    const main = await compileSourcesFor(compiled);
    child = startTb(main, ['gateway'], { ...gateway.env, LOG_LEVEL: 'error' });
    const ready = await child.line((line) => line.startsWith('Gateway ready at '), 60_000);
    childUrl = /Gateway ready at (http:\/\/\S+)\/v1/.exec(ready)![1];
  }, 120_000);

  afterAll(async () => {
    await child?.stop();
    await gateway?.close();
    if (compiled) await rm(compiled, { recursive: true, force: true });
  });

  it('keeps every balance equal to its ledger, within its bound, and bills every answer exactly', async () => {
    const random = seededRandom(backend.name === 'sqlite' ? 34 : 3434);
    const processes = [gateway.baseUrl, childUrl];
    const admin = gateway.adminKey;
    const adminCall = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
      const response = await fetch(`${random.pick(processes)}${path}`, {
        method,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as T };
    };

    const accounts: Account[] = [];
    for (let index = 0; index < 6; index++) {
      const created = await adminCall<User>('POST', '/admin/api/users', {
        email: `workload${index}-${backend.name.replace(/\W/g, '')}@example.com`,
        balance: 0.1 + 0.05 * index,
      });
      expect(created.status).toBe(201);
      const keys: string[] = [];
      for (let key = 0; key < 2; key++) {
        keys.push((await adminCall<{ key: string }>('POST', `/admin/api/users/${created.body.id}/keys`, {})).body.key);
      }
      accounts.push({ id: created.body.id, keys, inFlight: 0, allowedOverdraftMicros: 0 });
    }

    const answered: Answered[] = [];
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    gateway.ollama.tokenDelayMs = 2;

    // Balances as the database has them, sampled while the workload runs.
    const dataSource = gateway.app.get(DataSource);
    const lowest = new Map<string, number>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = (await dataSource.query('SELECT id, balance_micros FROM gateway_users')) as Array<{
          id: string;
          balance_micros: string | number;
        }>;
        for (const row of rows) {
          lowest.set(row.id, Math.min(lowest.get(row.id) ?? Infinity, Number(row.balance_micros)));
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const operation = async () => {
      const account = random.pick(accounts);
      const baseUrl = random.pick(processes);
      const roll = random.next();
      if (roll < 0.05) {
        count(
          (await adminCall('POST', `/admin/api/users/${account.id}/topup`, { amount: 0.05 + random.below(30) / 100 }))
            .status,
        );
        return;
      }
      if (roll < 0.1) {
        // A set under what calls in flight will cost may take the balance below zero by at most their holds.
        const before = account.inFlight;
        const set = await adminCall('PATCH', `/admin/api/users/${account.id}`, { balance: random.below(30) / 100 });
        account.allowedOverdraftMicros += Math.max(before, account.inFlight) * MAX_HOLD_MICROS;
        count(set.status);
        return;
      }
      if (roll < 0.12) {
        // Calls already under way with the revoked key finish and are billed; later ones get 401.
        const keyIndex = random.below(account.keys.length);
        const revoked = account.keys[keyIndex];
        account.keys[keyIndex] = (
          await adminCall<{ key: string }>('POST', `/admin/api/users/${account.id}/keys`, {})
        ).body.key;
        const keys = (
          await adminCall<{ keys: Array<{ id: string; key_prefix: string; revoked_at: string | null }> }>(
            'GET',
            `/admin/api/users/${account.id}`,
          )
        ).body.keys.filter((key) => key.revoked_at === null && revoked.startsWith(key.key_prefix));
        for (const key of keys)
          count((await adminCall('DELETE', `/admin/api/users/${account.id}/keys/${key.id}`)).status);
        return;
      }
      const key = random.pick(account.keys);
      const stream = roll >= 0.6;
      const failMidstream = stream && roll >= 0.95;
      const leave = stream && !failMidstream && roll >= 0.88;
      // A stream to be left gets the longest prompt, so it is still generating when the client goes.
      const words = Array.from({ length: leave ? 6 : 1 + random.below(6) }, () => random.pick(WORDS));
      if (!stream && roll < 0.16) gateway.ollama.failures.push({ status: 500, error: 'runner crashed' });
      const body = {
        model: random.pick(['llama3.2', 'llama3.2:latest']),
        messages: [{ role: 'user', content: failMidstream ? `${words.join(' ')} FAIL_MIDSTREAM` : words.join(' ') }],
        ...(!leave && random.next() < 0.75 ? { max_tokens: 1 + random.below(8) } : {}),
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      };
      account.inFlight += 1;
      try {
        const abort = new AbortController();
        const response = await post(baseUrl, '/v1/chat/completions', key, body, abort.signal);
        count(response.status);
        if (response.status !== 200) {
          await response.arrayBuffer();
          return;
        }
        if (!stream) {
          const completion = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
          answered.push({
            userId: account.id,
            promptTokens: completion.usage.prompt_tokens,
            completionTokens: completion.usage.completion_tokens,
          });
          return;
        }
        const read = await readStream(response, leave ? 2 : undefined, abort);
        if (leave) {
          answered.push({ userId: account.id, left: true, promptTokens: 0, completionTokens: 0 });
        } else if (read.usage) {
          answered.push({
            userId: account.id,
            promptTokens: read.usage.prompt_tokens,
            completionTokens: read.usage.completion_tokens,
          });
        }
      } finally {
        account.inFlight -= 1;
      }
    };

    let started = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (started < OPERATIONS) {
          started += 1;
          await operation();
        }
      }),
    );
    gateway.ollama.tokenDelayMs = 0;
    gateway.ollama.failures.length = 0;
    // Each process writes what it has settled before it answers a read of balances.
    for (const baseUrl of processes) {
      const list = await fetch(`${baseUrl}/admin/api/users`, { headers: { authorization: `Bearer ${admin}` } });
      expect(list.status).toBe(200);
    }
    // A stream the client left is settled when the gateway notices; wait until no hold is open.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const [open] = (await dataSource.query(
        'SELECT COALESCE(SUM(held_micros), 0) AS held FROM gateway_users',
      )) as Array<{
        held: string | number;
      }>;
      if (Number(open.held) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sampling = false;
    await sampler;

    // The workload did what it says: answers, refusals for money, upstream failures.
    expect(statuses.get(200)).toBeGreaterThan(200);
    expect(statuses.get(402)).toBeGreaterThan(10);
    expect(statuses.get(502) ?? 0).toBeGreaterThan(5);

    for (const account of accounts) {
      const [user] = (await dataSource.query('SELECT balance_micros, held_micros FROM gateway_users WHERE id = ?', [
        account.id,
      ])) as Array<{ balance_micros: string | number; held_micros: string | number }>;
      const [sums] = (await dataSource.query(
        'SELECT COALESCE(SUM(amount_micros), 0) AS amount, COALESCE(SUM(held_micros), 0) AS held FROM gateway_transactions WHERE user_id = ?',
        [account.id],
      )) as Array<{ amount: string | number; held: string | number }>;
      const balance = Number(user.balance_micros);
      expect({ user: account.id, balance, held: Number(user.held_micros) }).toEqual({
        user: account.id,
        balance: Number(sums.amount),
        held: 0,
      });
      expect(Number(sums.held)).toBe(0);
      expect(Math.min(balance, lowest.get(account.id) ?? balance)).toBeGreaterThanOrEqual(
        -account.allowedOverdraftMicros,
      );

      // Every hold was closed once: by a charge of exactly its usage row's cost, or by a release of nothing.
      const rows = (await dataSource.query(
        `SELECT t.kind, t.amount_micros, u.prompt_tokens, u.completion_tokens, u.cost_micros, u.billed, u.status
           FROM gateway_transactions t LEFT JOIN gateway_usage u ON u.id = t.usage_id
          WHERE t.user_id = ? AND t.kind IN ('hold', 'charge', 'release')`,
        [account.id],
      )) as Array<{
        kind: string;
        amount_micros: string | number;
        prompt_tokens: number;
        completion_tokens: number;
        cost_micros: string | number;
        billed: number | boolean;
        status: number;
      }>;
      const holds = rows.filter((row) => row.kind === 'hold').length;
      const closings = rows.filter((row) => row.kind !== 'hold');
      expect(closings).toHaveLength(holds);
      for (const row of closings) {
        const cost = costMicros(PRICE, row.prompt_tokens, row.completion_tokens);
        if (row.kind === 'charge') {
          expect({ billed: Boolean(row.billed), amount: Number(row.amount_micros) }).toEqual({
            billed: true,
            amount: -cost,
          });
          expect(Number(row.cost_micros)).toBe(cost);
        } else {
          expect({
            billed: Boolean(row.billed),
            amount: Number(row.amount_micros),
            cost: Number(row.cost_micros),
          }).toEqual({ billed: false, amount: 0, cost: 0 });
        }
      }

      // Every 2xx answer is one billed usage row of status 200 with the runtime's own counts; every stream the
      // client left is one billed row too (499, or 200 when the runtime had already finished it).
      const mine = answered.filter((answer) => answer.userId === account.id);
      const expected = mine
        .filter((answer) => !answer.left)
        .map((answer) => `${answer.promptTokens}/${answer.completionTokens}`);
      const billedRows = (await dataSource.query(
        'SELECT prompt_tokens, completion_tokens, status FROM gateway_usage WHERE user_id = ? AND billed = ?',
        [account.id, 1],
      )) as Array<{ prompt_tokens: number; completion_tokens: number; status: number }>;
      const billed = billedRows
        .filter((row) => row.status === 200)
        .map((row) => `${row.prompt_tokens}/${row.completion_tokens}`);
      const unmatched = [...billed];
      for (const answer of expected) {
        const at = unmatched.indexOf(answer);
        expect({ answer, billed: at >= 0 }).toEqual({ answer, billed: true });
        unmatched.splice(at, 1);
      }
      const cut = billedRows.filter((row) => row.status === 499).length;
      expect(unmatched.length + cut).toBe(mine.filter((answer) => answer.left).length);
      expect(billedRows.every((row) => row.status === 200 || row.status === 499)).toBe(true);
    }

    // A balance for N calls with max_tokens serves N, with the calls spread over both processes.
    const fresh = await adminCall<User>('POST', '/admin/api/users', {
      email: `exact-${backend.name.replace(/\W/g, '')}@example.com`,
      // "abc def" with max_tokens 3 holds and costs 0.002 + 0.006; 0.06 covers seven and a half.
      balance: 0.06,
    });
    const key = (await adminCall<{ key: string }>('POST', `/admin/api/users/${fresh.body.id}/keys`, {})).body.key;
    const served = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        post(processes[index % 2], '/v1/chat/completions', key, {
          model: 'llama3.2',
          messages: [{ role: 'user', content: 'abc def' }],
          max_tokens: 3,
        }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        }),
      ),
    );
    expect(served.filter((status) => status === 200)).toHaveLength(7);
    expect(served.filter((status) => status === 402)).toHaveLength(33);
    for (const baseUrl of processes) {
      await fetch(`${baseUrl}/admin/api/users/${fresh.body.id}`, { headers: { authorization: `Bearer ${admin}` } });
    }
    const after = await adminCall<User & { held: number }>('GET', `/admin/api/users/${fresh.body.id}`);
    expect(after.body).toMatchObject({ balance: 0.004, held: 0 });
  }, 120_000);
});
