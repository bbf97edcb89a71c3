import { WebSocket } from 'ws';
import { FakeOpenAiAudio } from '../../fixtures/fake-openai-audio.js';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** Live voice sessions and the WebSocket protocol (the original's message types). */

type Message = Record<string, unknown> & { type: string };

class LiveClient {
  readonly messages: Message[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  static async connect(url: string): Promise<LiveClient> {
    const socket = new WebSocket(url);
    const client = new LiveClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  send(message: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(message));
  }

  async waitFor(type: string, timeoutMs = 5000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find((message) => message.type === type);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no ${type} message; got ${this.messages.map((m) => m.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}

describe.each(backends())('gateway live voice ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let audio: FakeOpenAiAudio;

  beforeAll(async () => {
    audio = new FakeOpenAiAudio();
    gateway = await startGateway(backend, { env: { TTS_URL: await audio.start() } });
  });

  afterAll(async () => {
    await gateway?.close();
    await audio?.stop();
  });

  const open = async (body: Record<string, unknown> = {}, key?: string) => {
    const created = await gateway.call<{ token: string; websocket_url: string; expires_at: string }>(
      'POST',
      '/v1/audio/live',
      { llm_config: { model: 'llama3.2', system_prompt: 'Be brief.' }, voice_config: { model: 'kokoro' }, ...body },
      key,
    );
    expect(created.status).toBe(201);
    return created.body;
  };

  it('creates a session with a token, a websocket URL and an expiry within the TTL', async () => {
    const session = await open({ session_ttl_minutes: 5 });
    expect(session.token).toMatch(/^live-[0-9a-f]{32}$/);
    expect(session.websocket_url).toBe(`${gateway.baseUrl.replace('http', 'ws')}/v1/audio/live/ws/${session.token}`);
    const minutes = (Date.parse(session.expires_at) - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(4.9);
    expect(minutes).toBeLessThanOrEqual(5);
    const info = await gateway.call<{ history_length: number; config: { llm: { model: string } } }>(
      'GET',
      `/v1/audio/live/${session.token}`,
    );
    expect(info.body).toMatchObject({ history_length: 0, config: { llm: { model: 'llama3.2' } } });
  });

  it('refuses a TTL outside 5–20 minutes, a missing model and an unknown one', async () => {
    const ttl = await gateway.call<{ error: { param: string } }>('POST', '/v1/audio/live', {
      llm_config: { model: 'llama3.2' },
      session_ttl_minutes: 30,
    });
    expect(ttl.status).toBe(400);
    expect(ttl.body.error.param).toBe('session_ttl_minutes');
    expect((await gateway.call('POST', '/v1/audio/live', {})).status).toBe(400);
    expect((await gateway.call('POST', '/v1/audio/live', { llm_config: { model: 'ghost' } })).status).toBe(404);
  });

  it('runs a turn: text deltas, audio per sentence, turn_complete with usage', async () => {
    const session = await open();
    const client = await LiveClient.connect(session.websocket_url);
    expect(await client.waitFor('ready')).toMatchObject({ session_token: session.token });
    client.send({ type: 'ping' });
    await client.waitFor('pong');
    client.send({ type: 'audio', transcript: 'Hello there.', is_final: false });
    expect(await client.waitFor('transcript')).toMatchObject({ text: 'Hello there.', is_input: true, is_final: false });
    client.send({ type: 'end_turn', transcript: 'Hello there. How are you' });
    const done = await client.waitFor('turn_complete');
    expect(done).toMatchObject({
      input_transcript: 'Hello there. How are you',
      output_transcript: 'Echo: Hello there. How are you',
      interrupted: false,
      tools_called: [],
      usage: { tokens_in: 7, tokens_out: 6 },
    });
    const texts = client.messages.filter((message) => message.type === 'text').map((message) => message.text);
    expect(texts.join('')).toBe('Echo: Hello there. How are you');
    const spoken = client.messages
      .filter((message) => message.type === 'audio')
      .map((message) => [message.text, Buffer.from(String(message.audio), 'base64').toString()]);
    expect(spoken).toEqual([
      ['Echo: Hello there.', 'FAKE-mp3:Echo: Hello there.'],
      ['How are you', 'FAKE-mp3:How are you'],
    ]);
    // The system prompt and the conversation so far go to the runtime.
    expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there. How are you' },
      ],
    });
    client.socket.close();
    const info = await gateway.call<{ history_length: number }>('GET', `/v1/audio/live/${session.token}`);
    expect(info.body.history_length).toBe(2);
  });

  it('interrupts a running turn, stopping the upstream generation', async () => {
    const session = await open();
    const client = await LiveClient.connect(session.websocket_url);
    await client.waitFor('ready');
    gateway.ollama.tokenDelayMs = 30;
    gateway.ollama.abortedAfterRecords = null;
    try {
      client.send({ type: 'end_turn', transcript: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' });
      await client.waitFor('text');
      client.send({ type: 'interrupt' });
      expect(await client.waitFor('interrupted')).toMatchObject({ partial_output: expect.stringMatching(/^Echo:/) });
      expect(await client.waitFor('turn_complete')).toMatchObject({ interrupted: true });
      const deadline = Date.now() + 3000;
      while (gateway.ollama.abortedAfterRecords === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(gateway.ollama.abortedAfterRecords).toBeLessThan(27);
    } finally {
      gateway.ollama.tokenDelayMs = 0;
      client.socket.close();
    }
  });

  it('asks for the wake word, and answers what follows it', async () => {
    const session = await open({ wake_word_config: { enabled: true, words: ['hey toolbox'], mode: 'pre' } });
    const client = await LiveClient.connect(session.websocket_url);
    await client.waitFor('ready');
    client.send({ type: 'end_turn', transcript: 'what time is it' });
    expect(await client.waitFor('wake_word_required')).toMatchObject({ message: 'Wake word not detected' });
    client.send({ type: 'end_turn', transcript: 'Hey Toolbox, what time is it' });
    expect(await client.waitFor('turn_complete')).toMatchObject({ input_transcript: 'what time is it' });
    client.send({ type: 'end_turn', transcript: '   ' });
    expect(await client.waitFor('error')).toMatchObject({ message: 'Empty transcript' });
    client.socket.close();
  });

  it('closes an unknown token with 4004', async () => {
    const client = await LiveClient.connect(`${gateway.baseUrl.replace('http', 'ws')}/v1/audio/live/ws/live-nope`);
    expect(await client.closed).toEqual({ code: 4004, reason: 'Invalid or expired session' });
  });

  it('closes the open socket on DELETE and forgets the session', async () => {
    const session = await open();
    const client = await LiveClient.connect(session.websocket_url);
    await client.waitFor('ready');
    expect((await gateway.call('DELETE', `/v1/audio/live/${session.token}`)).body).toEqual({
      status: 'closed',
      token: session.token,
    });
    expect(await client.closed).toEqual({ code: 1000, reason: 'Session closed' });
    expect((await gateway.call('GET', `/v1/audio/live/${session.token}`)).status).toBe(404);
    const again = await LiveClient.connect(session.websocket_url);
    expect((await again.closed).code).toBe(4004);
  });

  it('bills turns like chat and hides sessions from other users', async () => {
    const user = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
      email: 'live@example.com',
      balance: 1,
    });
    const key = (await gateway.call<{ key: string }>('POST', `/admin/api/users/${user.body.id}/keys`, {})).body.key;
    const session = await open({}, key);
    const client = await LiveClient.connect(session.websocket_url);
    await client.waitFor('ready');
    client.send({ type: 'end_turn', transcript: 'one two three' });
    const done = await client.waitFor('turn_complete');
    expect(done.cost).toBeGreaterThan(0);
    client.socket.close();
    const usage = await gateway.call<{ requests: number; cost: number }>('GET', '/user/api/usage', undefined, key);
    expect(usage.body.requests).toBe(1);
    expect(usage.body.cost).toBeCloseTo(done.cost as number, 9);
    const other = await gateway.call<{ id: string }>('POST', '/admin/api/users', { email: 'other@example.com' });
    const otherKey = (await gateway.call<{ key: string }>('POST', `/admin/api/users/${other.body.id}/keys`, {})).body
      .key;
    expect((await gateway.call('GET', `/v1/audio/live/${session.token}`, undefined, otherKey)).status).toBe(404);
  });
});

describe('gateway live voice without TTS', () => {
  it('answers 501 naming TTS_URL', async () => {
    const [backend] = backends();
    const gateway = await startGateway(backend);
    try {
      const { status, body } = await gateway.call<{ error: { message: string } }>('POST', '/v1/audio/live', {
        llm_config: { model: 'llama3.2' },
      });
      expect(status).toBe(501);
      expect(body.error.message).toContain('TTS_URL');
    } finally {
      await gateway.close();
    }
  });
});
