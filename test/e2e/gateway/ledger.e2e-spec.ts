import OpenAI from 'openai';
import { DataSource } from 'typeorm';
import { backends } from '../../support/backends.js';
import { type GatewayUnderTest, parallelChats, startGateway } from '../../support/gateway-under-test.js';

/**
 * The PAYG ledger through the public API: holds, settlement, admin sets and top-ups, and usage totals. Prices are
 * 1 per 1K prompt tokens and 2 per 1K completion tokens; the fake runtime counts a prompt's words and answers
 * "Echo: <text>" one word a token, so a one-word prompt of three letters ("abc") is estimated (characters / 4)
 * exactly as the runtime counts it, and a call costs exactly what it held.
 */

interface User {
  id: string;
  balance: number;
  held: number;
  available: number;
}
interface Usage {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  failed: { requests: number; prompt_tokens: number; completion_tokens: number };
  by_model: Array<{ model: string; requests: number }>;
}

let emailCounter = 0;

async function userWithKey(gateway: GatewayUnderTest, balance: number): Promise<{ user: User; key: string }> {
  emailCounter += 1;
  const created = await gateway.call<User>('POST', '/admin/api/users', {
    email: `ledger${emailCounter}@example.com`,
    balance,
  });
  expect(created.status).toBe(201);
  const issued = await gateway.call<{ key: string }>('POST', `/admin/api/users/${created.body.id}/keys`, {});
  expect(issued.status).toBe(201);
  return { user: created.body, key: issued.body.key };
}

const me = async (gateway: GatewayUnderTest, key: string) =>
  (await gateway.call<User>('GET', '/user/api/me', undefined, key)).body;

/** The user's ledger rows summed (balance and holds) beside the user's row: they must always agree. */
async function ledgerOf(gateway: GatewayUnderTest, userId: string) {
  const dataSource = gateway.app.get(DataSource);
  const [sums] = (await dataSource.query(
    'SELECT COALESCE(SUM(amount_micros), 0) AS amount, COALESCE(SUM(held_micros), 0) AS held FROM gateway_transactions WHERE user_id = ?',
    [userId],
  )) as Array<{ amount: string | number; held: string | number }>;
  const [user] = (await dataSource.query('SELECT balance_micros, held_micros FROM gateway_users WHERE id = ?', [
    userId,
  ])) as Array<{ balance_micros: string | number; held_micros: string | number }>;
  return {
    rowsBalance: Number(sums.amount),
    rowsHeld: Number(sums.held),
    balance: Number(user.balance_micros),
    held: Number(user.held_micros),
  };
}

describe.each(backends())('gateway ledger ($name)', (backend) => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGateway(backend, {
      settings: { prices: { input_per_1k: 1, output_per_1k: 2 }, rate_limits: { payg: 100_000, sub: 100_000 } },
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('charges a call running while an admin sets the balance against the new balance, refunding nothing', async () => {
    const { user, key } = await userWithKey(gateway, 10);
    gateway.ollama.tokenDelayMs = 40;
    try {
      // 3 prompt words (estimated 4 tokens) and max_tokens 50: a hold of 0.004 + 0.1.
      const stream = await gateway.openai(key).chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'abcd efgh ijkl' }],
        max_tokens: 50,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = stream[Symbol.asyncIterator]();
      await chunks.next();
      const set = await gateway.call<User>('PATCH', `/admin/api/users/${user.id}`, { balance: 50 });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ balance: 50, held: 0.104 });
      expect(set.body.available).toBeCloseTo(49.896, 9);
      let usage: OpenAI.CompletionUsage | undefined;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) usage = next.value.usage ?? usage;
      expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
    } finally {
      gateway.ollama.tokenDelayMs = 0;
    }
    // 3 × 0.001 + 4 × 0.002 = 0.011 leaves the 50 set, and the hold is gone.
    const after = await me(gateway, key);
    expect(after.balance).toBeCloseTo(50 - 0.011, 9);
    expect(after.held).toBe(0);
    const ledger = await ledgerOf(gateway, user.id);
    expect(ledger).toEqual({ rowsBalance: ledger.balance, rowsHeld: 0, balance: 49_989_000, held: 0 });
  });

  it('serves back-to-back calls while the balance covers them, then answers 402', async () => {
    // A call costs 0.011 (3 prompt and 4 completion tokens); 0.0605 covers five and a half.
    const { key } = await userWithKey(gateway, 0.0605);
    const client = gateway.openai(key);
    const statuses: Array<number | undefined> = [];
    for (let call = 0; call < 6; call++) {
      statuses.push(
        await client.chat.completions
          .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'abcd efgh ijkl' }] })
          .then(
            () => 200,
            (error: unknown) => (error as InstanceType<typeof OpenAI.APIError>).status,
          ),
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 402]);
    expect((await me(gateway, key)).balance).toBeCloseTo(0.0055, 9);
  });

  it('serves exactly the calls a balance covers when 50 with max_tokens arrive at once, never going below 0', async () => {
    // "abc" with max_tokens 2 holds and costs 0.001 + 0.004; 0.0525 covers ten and a half.
    const { user, key } = await userWithKey(gateway, 0.0525);
    const client = gateway.openai(key);
    const { served, refused } = await parallelChats(client, 50, {
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'abc' }],
      max_tokens: 2,
    });
    expect(served).toHaveLength(10);
    expect(refused).toBe(40);
    const after = await me(gateway, key);
    expect(after.balance).toBeCloseTo(0.0025, 9);
    expect(after.held).toBe(0);
    const ledger = await ledgerOf(gateway, user.id);
    expect(ledger.rowsBalance).toBe(ledger.balance);
  });

  it('refuses a prompt the balance does not cover without asking the runtime', async () => {
    const { key } = await userWithKey(gateway, 0.000001);
    const before = gateway.ollama.requests.length;
    const error = await gateway
      .openai(key)
      .chat.completions.create({
        model: 'llama3.2',
        messages: [{ role: 'user', content: Array.from({ length: 20_000 }, () => 'word').join(' ') }],
      })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(gateway.ollama.requests.length).toBe(before);
    expect(await me(gateway, key)).toMatchObject({ balance: 0.000001, held: 0 });
  });

  it('lets a call without max_tokens generate only what the balance covers', async () => {
    // "abc" costs 0.001 as a prompt; 0.003 leaves room for one completion token (0.002).
    const { key } = await userWithKey(gateway, 0.003);
    const completion = await gateway
      .openai(key)
      .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'abc' }] });
    expect((gateway.ollama.lastRequest('/api/chat') as { options?: { num_predict?: number } }).options).toMatchObject({
      num_predict: 1,
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 1 });
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(await me(gateway, key)).toMatchObject({ balance: 0, held: 0 });
  });

  it('refuses admin amounts outside 0 to one billion with 422 and changes nothing', async () => {
    const { user, key } = await userWithKey(gateway, 1);
    const attempts: Array<[string, string, unknown]> = [
      ['POST', `/admin/api/users/${user.id}/topup`, { amount: 1e308 }],
      ['POST', `/admin/api/users/${user.id}/topup`, { amount: 1e9 }],
      ['POST', `/admin/api/users/${user.id}/topup`, { amount: 1e-7 }],
      ['PATCH', `/admin/api/users/${user.id}`, { balance: 1e300 }],
      ['PATCH', `/admin/api/users/${user.id}`, { balance: 1e19 }],
      ['PATCH', `/admin/api/users/${user.id}`, { balance: -5 }],
      ['POST', '/admin/api/users', { email: 'too-rich@example.com', balance: 1e12 }],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await gateway.call<{ error: { message: string } }>(method, path, body);
      expect({ path, body, status: answer.status }).toEqual({ path, body, status: 422 });
      expect(answer.body.error.message).toMatch(/amount|balance|Validation/);
    }
    expect(await me(gateway, key)).toMatchObject({ balance: 1, held: 0 });
    expect((await gateway.call('GET', '/admin/api/users')).body).not.toMatchObject({
      users: expect.arrayContaining([expect.objectContaining({ email: 'too-rich@example.com' })]),
    });
    // The top of the range is accepted; a top-up past it is not.
    const top = await gateway.call<User>('PATCH', `/admin/api/users/${user.id}`, { balance: 1e9 });
    expect(top.body.balance).toBe(1e9);
    const over = await gateway.call('POST', `/admin/api/users/${user.id}/topup`, { amount: 0.000001 });
    expect(over.status).toBe(422);
    expect((await me(gateway, key)).balance).toBe(1e9);
  });

  it('keeps failed calls apart from billed usage, and counts m and m:latest as one model', async () => {
    const { user, key } = await userWithKey(gateway, 1);
    const client = gateway.openai(key);
    await client.chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'abc' }] });
    await client.chat.completions.create({ model: 'llama3.2:latest', messages: [{ role: 'user', content: 'abc' }] });
    gateway.ollama.failures.push({ status: 500, error: 'runner crashed' });
    const failed = await client.chat.completions
      .create({ model: 'llama3.2', messages: [{ role: 'user', content: 'abc' }] })
      .catch((caught: unknown) => caught);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    // A stream that breaks after its first token: the runtime generated something, but the call failed.
    const stream = await client.chat.completions.create({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'FAIL_MIDSTREAM now' }],
      stream: true,
    });
    await (async () => {
      for await (const _chunk of stream) void _chunk;
    })().catch(() => undefined);
    const usage = (await gateway.call<Usage>('GET', '/user/api/usage?days=1', undefined, key)).body;
    // Two billed calls of 1 + 2 tokens (0.005 each); the failures are counted apart, at no cost.
    expect(usage).toMatchObject({ requests: 2, prompt_tokens: 2, completion_tokens: 4, cost: 0.01 });
    expect(usage.failed.requests).toBe(2);
    expect(usage.failed.completion_tokens).toBeGreaterThanOrEqual(1);
    expect(usage.by_model).toEqual([expect.objectContaining({ model: 'llama3.2:latest', requests: 2 })]);
    expect((await me(gateway, key)).balance).toBeCloseTo(0.99, 9);
    const ledger = await ledgerOf(gateway, user.id);
    expect(ledger).toMatchObject({ rowsBalance: ledger.balance, rowsHeld: 0, held: 0 });
  });
});
