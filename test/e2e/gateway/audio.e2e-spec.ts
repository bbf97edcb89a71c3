import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { FakeOpenAiAudio } from '../../fixtures/fake-openai-audio.js';
import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** Speech and transcription through configured OpenAI-audio backends, with the openai SDK. */

const BOUNDARY = 'tbaudioboundary';
const field = (name: string, value: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = () =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n` +
  `Content-Type: audio/wav\r\n\r\nRIFF\r\n`;

describe.each(backends())('gateway audio ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let audio: FakeOpenAiAudio;

  beforeAll(async () => {
    audio = new FakeOpenAiAudio();
    const url = await audio.start();
    gateway = await startGateway(backend, {
      env: { TTS_URL: url, STT_URL: url, TTS_API_KEY: 'tts-secret' },
      settings: { prices: { input_per_1k: 1, output_per_1k: 1 } },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await audio?.stop();
  });

  it('returns the synthesized audio with the format’s content type', async () => {
    const response = await gateway
      .openai()
      .audio.speech.create({ model: 'kokoro', input: 'Hello there', voice: 'alloy', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe('FAKE-wav:Hello there');
    expect(audio.requests.at(-1)).toMatchObject({
      path: '/v1/audio/speech',
      authorization: 'Bearer tts-secret',
      body: { model: 'kokoro', voice: 'alloy', speed: 1 },
    });
  });

  it('refuses speech input over 4096 characters and a bad speed with 400', async () => {
    for (const request of [
      { model: 'kokoro', input: 'x'.repeat(4097), voice: 'alloy' },
      { model: 'kokoro', input: 'hi', voice: 'alloy', speed: 9 },
    ]) {
      await expect(gateway.openai().audio.speech.create(request)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    }
  });

  it('passes a backend refusal on as a 400', async () => {
    const error = await gateway
      .openai()
      .audio.speech.create({ model: 'kokoro', input: 'hi', voice: 'nobody' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('Unknown voice nobody');
  });

  it('passes a backend failure (HTTP 500) on as a 502, not the 503 of an unreachable backend', async () => {
    const error = await gateway
      .openai()
      .audio.speech.create({ model: 'kokoro', input: 'hi', voice: 'crash' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as Error).message).toContain('synthesis worker died');
  });

  it('transcribes an uploaded file as json, verbose_json and text', async () => {
    const file = await toFile(Buffer.alloc(2048, 7), 'speech.wav', { type: 'audio/wav' });
    const json = await gateway.openai().audio.transcriptions.create({ model: 'whisper-1', file });
    expect(json.text).toBe('transcript of speech.wav (2048 bytes)');
    const verbose = await gateway.openai().audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(Buffer.alloc(10), 'a.wav'),
      response_format: 'verbose_json',
      language: 'de',
    });
    expect(verbose).toMatchObject({ language: 'de', duration: 1.5, text: 'transcript of a.wav (10 bytes)' });
    const text = await gateway.openai().audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(Buffer.alloc(5), 'b.wav'),
      response_format: 'text',
    });
    expect(text).toBe('transcript of b.wav (5 bytes)');
    expect(audio.requests.at(-1)?.fields).toMatchObject({ model: 'whisper-1', response_format: 'text' });
  });

  it.each([
    ['two file parts', [filePart(), filePart()], 400],
    ['a 2 MB prompt field', [field('prompt', 'x'.repeat(2 * 1024 * 1024)), filePart()], 413],
  ])('refuses a transcription with %s within a second and stages nothing', async (_case, parts, status) => {
    const started = Date.now();
    const response = await fetch(`${gateway.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.adminKey}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      },
      body: field('model', 'whisper-1') + parts.join('') + `--${BOUNDARY}--\r\n`,
      signal: AbortSignal.timeout(3000),
    });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBeTruthy();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await readdir(join(gateway.dataDir, 'tmp')).catch(() => [])).toEqual([]);
  });

  it('bills speech by characters and transcription by the backend’s token usage', async () => {
    const user = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
      email: 'voice@example.com',
      balance: 1,
    });
    const key = (await gateway.call<{ key: string }>('POST', `/admin/api/users/${user.body.id}/keys`, {})).body.key;
    await gateway.openai(key).audio.speech.create({ model: 'kokoro', input: 'x'.repeat(100), voice: 'alloy' });
    await gateway
      .openai(key)
      .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(1000), 'c.wav') });
    const usage = await gateway.call<{
      requests: number;
      prompt_tokens: number;
      completion_tokens: number;
      cost: number;
    }>('GET', '/user/api/usage', undefined, key);
    // 100 characters + 10 input tokens, 5 output words, at 1 per 1K each.
    expect(usage.body).toMatchObject({ requests: 2, prompt_tokens: 110, completion_tokens: 5 });
    expect(usage.body.cost).toBeCloseTo(0.115, 9);
  });
});

describe('gateway audio without backends', () => {
  it('answers 501 naming the variable to set', async () => {
    const [backend] = backends();
    const gateway = await startGateway(backend);
    try {
      const speech = await gateway.call<{ error: { message: string; type: string } }>('POST', '/v1/audio/speech', {
        model: 'kokoro',
        input: 'hi',
        voice: 'alloy',
      });
      expect(speech.status).toBe(501);
      expect(speech.body.error.message).toContain('TTS_URL');
      const error = await gateway
        .openai()
        .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(4), 'd.wav') })
        .catch((caught: unknown) => caught);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(501);
      expect((error as Error).message).toContain('STT_URL');
    } finally {
      await gateway.close();
    }
  });
});
