import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FakeOpenAiAudio } from '../../fixtures/fake-openai-audio.js';
import { backends } from '../../support/backends.js';
import {
  firstRenderMs,
  SCREENSHOT_DIR,
  scriptAndStyleBytes,
  startBrowser,
  type BrowserUnderTest,
  type TrackedPage,
} from '../../support/browser.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/**
 * The gateway's /user/, /playground/ and /live pages in a real headless Chromium, against the real
 * gateway with the fake Ollama and the fake OpenAI-audio backend. Speech input is stubbed at the browser API only.
 */

// Functions passed to page.evaluate/waitForFunction run in the page; the project compiles without the DOM lib.
declare const window: any;
declare const document: any;

const ARTIFACTS_DIR = dirname(SCREENSHOT_DIR);
const PAGE_BUDGET_BYTES = 150 * 1024;
/** A 2×2 red PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==',
  'base64',
);

interface IssuedKey {
  key: string;
}

describe.each(backends())('gateway user pages in Chromium ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let audio: FakeOpenAiAudio;
  let browser: BrowserUnderTest;
  let key = '';
  const measured: Record<string, { firstRenderMs: number; scriptAndStyleBytes: number }> = {};

  beforeAll(async () => {
    audio = new FakeOpenAiAudio();
    const audioUrl = await audio.start();
    // The suite makes a dozen billable calls within a minute: more than a PAYG user's default limit.
    gateway = await startGateway(backend, {
      env: { TTS_URL: audioUrl, STT_URL: audioUrl },
      settings: { rate_limits: { payg: 60, sub: 60 } },
    });
    const user = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
      email: 'pages@example.com',
      balance: 5,
    });
    expect(user.status).toBe(201);
    const issued = await gateway.call<IssuedKey>('POST', `/admin/api/users/${user.body.id}/keys`, { name: 'browser' });
    expect(issued.status).toBe(201);
    key = issued.body.key;
    browser = await startBrowser();
  });

  afterAll(async () => {
    // First render is recorded, not asserted (no timed assertions in tests; the time goes to a file).
    if (Object.keys(measured).length) {
      await mkdir(ARTIFACTS_DIR, { recursive: true });
      await writeFile(
        join(ARTIFACTS_DIR, `page-metrics-user-pages-${backend.name}.json`),
        `${JSON.stringify(measured, null, 2)}\n`,
      );
    }
    await browser?.close();
    await gateway?.close();
    await audio?.stop();
  });

  /** A page with the key entered through the page's own form (the first visit of a tab). */
  async function signedIn(path: string, init?: () => void): Promise<TrackedPage> {
    const tracked = await browser.newPage();
    if (init) await tracked.page.addInitScript(init);
    await tracked.page.goto(`${gateway.baseUrl}${path}`);
    await tracked.page.getByLabel('Your API key').fill(key);
    await tracked.page.getByRole('button', { name: 'Continue' }).click();
    return tracked;
  }

  it('refuses a wrong key with the gateway’s message and asks again, and signs out', async () => {
    const tracked = await browser.newPage();
    const { page } = tracked;
    await page.goto(`${gateway.baseUrl}/user/`);
    await page.getByLabel('Your API key').fill('sk-tb-wrong');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/key/i);
    expect(await page.evaluate(() => window.sessionStorage.getItem('tb-key:user'))).toBeNull();
    await page.getByLabel('Your API key').fill(key);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForSelector('#balance');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Your API key').waitFor();
    expect(await page.evaluate(() => window.sessionStorage.getItem('tb-key:user'))).toBeNull();
    await tracked.context.close();
  });

  it.each([
    ['/user/', '#balance'],
    ['/playground/', '#prompt'],
    ['/live', '#start'],
  ])('%s loads with no console error, every control named, within the JS+CSS budget', async (path, ready) => {
    const tracked = await signedIn(path);
    await tracked.page.waitForSelector(ready);
    expect(tracked.errors).toEqual([]);
    // Every control has a name a screen reader can say: a label, an aria-label or its own text.
    const unnamed = await tracked.page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, button')]
        .filter(
          (control: any) =>
            !control.labels?.length && !control.getAttribute('aria-label') && !control.textContent.trim(),
        )
        .map((control: any) => control.outerHTML),
    );
    expect(unnamed).toEqual([]);
    const bytes = scriptAndStyleBytes(tracked);
    expect(bytes).toBeGreaterThan(5000);
    expect(bytes).toBeLessThan(PAGE_BUDGET_BYTES);
    const rendered = await firstRenderMs(tracked.page);
    measured[path] = { firstRenderMs: Math.round(rendered), scriptAndStyleBytes: bytes };
    expect(rendered).toBeGreaterThan(0);
    await tracked.screenshot(`gateway${path.replace(/\/+$/, '').replace(/\//g, '-')}-${backend.name}`);
    // A phone-sized window shows the page without sideways scrolling.
    await tracked.page.setViewportSize({ width: 375, height: 740 });
    const overflow = await tracked.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await tracked.screenshot(`gateway${path.replace(/\/+$/, '').replace(/\//g, '-')}-phone-${backend.name}`);
    await tracked.context.close();
  });
  describe('playground', () => {
    let tracked: TrackedPage;

    beforeAll(async () => {
      tracked = await signedIn('/playground/');
      await tracked.page.waitForSelector('#prompt');
    });
    afterAll(async () => {
      gateway.ollama.tokenDelayMs = 0;
      await tracked?.context.close();
    });

    it('streams a reply token by token and shows tokens, cost and latency', async () => {
      const { page } = tracked;
      await page.selectOption('#model', 'llama3.2:latest');
      await page.fill('#system-prompt', 'Be brief.');
      gateway.ollama.tokenDelayMs = 80;
      const words = 'one two three four five six seven eight nine ten';
      await page.fill('#prompt', words);
      await page.click('#send');
      // Sample the reply while it streams: it must be seen at several lengths before it is complete.
      const seen = new Set<string>();
      const reply = page.locator('.message.assistant .text').last();
      for (let sample = 0; sample < 200; sample += 1) {
        const text = (await reply.textContent()) ?? '';
        seen.add(text);
        if (text === `Echo: ${words}`) break;
        await page.waitForTimeout(20);
      }
      const partial = [...seen].filter((text) => text.length > 0 && text !== `Echo: ${words}`);
      expect(partial.length).toBeGreaterThanOrEqual(3);
      for (const text of partial) expect(`Echo: ${words}`.startsWith(text)).toBe(true);
      const meta = page.locator('.message.assistant .meta').last();
      await page.waitForFunction(() =>
        document.querySelector('.message.assistant:last-child .meta')?.textContent?.includes('tokens'),
      );
      const facts = (await meta.textContent()) ?? '';
      // 10 words + the system prompt's 2, 11 streamed records; PAYG prices of the default config.
      expect(facts).toMatch(/12 in \/ 11 out tokens/);
      // The cost shown is the balance the turn took: what the usage API records for this key's only call.
      const usage = await gateway.call<{ cost: number }>('GET', '/user/api/usage?days=1', undefined, key);
      expect(usage.body.cost).toBeGreaterThan(0);
      expect(Number(/cost ([\d.]+)/.exec(facts)?.[1])).toBeCloseTo(usage.body.cost, 6);
      expect(facts).toMatch(/total \d+ ms/);
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
        model: 'llama3.2:latest',
        stream: true,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: words },
        ],
      });
      expect(tracked.errors).toEqual([]);
      await tracked.screenshot(`gateway-playground-chat-${backend.name}`);
    });

    it('sends an uploaded image to a vision model as a data URL the runtime receives', async () => {
      const { page } = tracked;
      await page.selectOption('#model', 'llava:latest');
      await page.setInputFiles('#image', { name: 'red.png', mimeType: 'image/png', buffer: PNG });
      await page.waitForSelector('#attachments img[alt="red.png"]');
      await page.fill('#prompt', 'What is in this picture?');
      await page.click('#send');
      await page.waitForFunction(() =>
        document.querySelector('.message.assistant:last-child .meta')?.textContent?.includes('tokens'),
      );
      expect(await page.locator('.message.assistant .text').last().textContent()).toBe('I see 1 image(s)');
      const sent = gateway.ollama.lastRequest('/api/chat') as { model: string; messages: Array<{ images?: string[] }> };
      expect(sent.model).toBe('llava:latest');
      expect(sent.messages.at(-1)?.images).toEqual([PNG.toString('base64')]);
      expect(tracked.errors).toEqual([]);
      await tracked.screenshot(`gateway-playground-image-${backend.name}`);
    });

    /** Half a second of Chromium's fake microphone, recorded with the page's button. */
    async function recordWith(page: TrackedPage['page'], model: string, mode: 'transcribe' | 'input_audio') {
      await page.selectOption('#model', model);
      await page.selectOption('#audio-mode', mode);
      await page.click('#record');
      await page.waitForSelector('#record[aria-pressed="true"]');
      await page.waitForTimeout(500);
      await page.click('#record');
    }

    it('records audio from the microphone and puts its transcription into the message', async () => {
      const { page } = tracked;
      await recordWith(page, 'llama3.2:latest', 'transcribe');
      await page.waitForFunction(() => document.querySelector('#prompt').value !== '');
      // The fake backend's transcript names the uploaded file and its size: the recording reached it.
      const text = await page.inputValue('#prompt');
      expect(text).toMatch(/^transcript of recording\.(webm|ogg) \((\d+) bytes\)$/);
      expect(Number(/\((\d+) bytes/.exec(text)?.[1])).toBeGreaterThan(100);
      const request = audio.requests.filter((entry) => entry.path === '/v1/audio/transcriptions').at(-1);
      expect(request?.fields?.model).toBe('whisper-1');
      await page.fill('#prompt', '');
      expect(tracked.errors).toEqual([]);
    });

    it('sends a recording to an omni model as input_audio WAV', async () => {
      const { page } = tracked;
      await recordWith(page, 'gemma3n:e4b', 'input_audio');
      await page.waitForSelector('#attachments audio');
      await page.fill('#prompt', 'What do you hear?');
      await page.click('#send');
      await page.waitForFunction(() =>
        document.querySelector('.message.assistant:last-child .meta')?.textContent?.includes('tokens'),
      );
      const sent = gateway.ollama.lastRequest('/api/chat') as { model: string; messages: Array<{ images?: string[] }> };
      expect(sent.model).toBe('gemma3n:e4b');
      const [wav] = sent.messages.at(-1)?.images ?? [];
      expect(
        Buffer.from(wav ?? '', 'base64')
          .subarray(0, 4)
          .toString(),
      ).toBe('RIFF');
      expect(
        Buffer.from(wav ?? '', 'base64')
          .subarray(8, 12)
          .toString(),
      ).toBe('WAVE');
      expect(tracked.errors).toEqual([]);
    });
    it('stops a streaming reply with the Stop button, which ends the upstream generation', async () => {
      const { page } = tracked;
      await page.selectOption('#model', 'llama3.2:latest');
      await page.click('#clear');
      gateway.ollama.tokenDelayMs = 80;
      gateway.ollama.abortedAfterRecords = null;
      try {
        await page.fill('#prompt', 'a b c d e f g h i j k l m n o p q r s t u v w x y z');
        await page.click('#send');
        await page.waitForFunction(
          () => (document.querySelector('.message.assistant .text')?.textContent ?? '') !== '',
        );
        await page.click('#stop');
        await page.waitForSelector('.message.assistant p:text("Stopped.")');
        const deadline = Date.now() + 3000;
        while (gateway.ollama.abortedAfterRecords === null && Date.now() < deadline) await page.waitForTimeout(20);
        expect(gateway.ollama.abortedAfterRecords).toBeLessThan(27);
      } finally {
        gateway.ollama.tokenDelayMs = 0;
      }
      expect(await page.isDisabled('#stop')).toBe(true);
      expect(await page.isEnabled('#send')).toBe(true);
      expect(tracked.errors).toEqual([]);
    });

    it('then shows that usage on the user page, in the totals and in today’s bar of the chart', async () => {
      const { page } = tracked;
      // Same tab: the key stored by the playground is used without asking again.
      await page.goto(`${gateway.baseUrl}/user/`);
      await page.waitForSelector('#usage-totals');
      const usage = await gateway.call<{
        requests: number;
        prompt_tokens: number;
        completion_tokens: number;
        by_day: Array<{ date: string; prompt_tokens: number; completion_tokens: number }>;
      }>('GET', '/user/api/usage?days=30', undefined, key);
      expect(usage.body.requests).toBeGreaterThanOrEqual(3);
      expect(await page.textContent('#usage-totals')).toContain(
        `${usage.body.requests} requests · ${usage.body.prompt_tokens} prompt + ${usage.body.completion_tokens} completion tokens`,
      );
      const today = usage.body.by_day.at(-1)!;
      const bar = page.locator(`svg.chart .bar[data-date="${today.date}"]`);
      expect(Number(await bar.getAttribute('data-value'))).toBe(today.prompt_tokens + today.completion_tokens);
      expect(Number(await bar.locator('rect').getAttribute('height'))).toBeGreaterThan(0);
      expect(await page.locator('svg.chart .bar').count()).toBe(30);
      const models = await page.locator('#usage-models tbody th').allTextContents();
      expect(models).toEqual(expect.arrayContaining(['llama3.2:latest', 'llava:latest', 'gemma3n:e4b']));
      expect(await page.textContent('#ratelimit')).toMatch(/^\d+ \/ 60$/);
      expect(tracked.errors).toEqual([]);
      await tracked.screenshot(`gateway-user-after-chat-${backend.name}`);
    });
  });

  describe('live voice', () => {
    /**
     * Replaces the browser's speech recognition (and only it) with one the test speaks through:
     * `window.testSpeech.say(text, isFinal)` fires a result as Chromium's would.
     */
    const fakeSpeechRecognition = () => {
      type Handler = ((event: unknown) => void) | null;
      class FakeSpeechRecognition {
        continuous = false;
        interimResults = false;
        lang = '';
        onresult: Handler = null;
        onerror: Handler = null;
        onend: Handler = null;
        start() {
          (window as unknown as { testSpeech: { active: FakeSpeechRecognition | null } }).testSpeech.active = this;
        }
        stop() {
          setTimeout(() => this.onend?.({}), 0);
        }
        abort() {
          this.stop();
        }
      }
      const speech = {
        active: null as FakeSpeechRecognition | null,
        say(text: string, isFinal: boolean) {
          const result = Object.assign([{ transcript: text, confidence: 0.9 }], { isFinal });
          speech.active?.onresult?.({ resultIndex: 0, results: [result] });
        },
      };
      Object.assign(window, {
        testSpeech: speech,
        SpeechRecognition: FakeSpeechRecognition,
        webkitSpeechRecognition: FakeSpeechRecognition,
      });
    };
    const say = (tracked: TrackedPage, text: string, isFinal: boolean) =>
      tracked.page.evaluate(
        ([spoken, final]) =>
          (window as unknown as { testSpeech: { say(text: string, isFinal: boolean): void } }).testSpeech.say(
            spoken as string,
            final as boolean,
          ),
        [text, isFinal],
      );
    const turnsDone = (tracked: TrackedPage, count: number) =>
      tracked.page.waitForFunction((expected) => document.querySelectorAll('.turn-meta').length >= expected, count);

    async function liveSession(configure?: (tracked: TrackedPage) => Promise<void>, init = fakeSpeechRecognition) {
      const tracked = await signedIn('/live', init);
      await tracked.page.waitForSelector('#start');
      await tracked.page.selectOption('#model', 'llama3.2:latest');
      await tracked.page.fill('#system-prompt', 'Be brief.');
      await configure?.(tracked);
      await tracked.page.click('#start');
      await tracked.page.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('Connected'));
      return tracked;
    }

    it('exchanges a turn over the WebSocket: recognised speech in, streamed text and spoken sentences out', async () => {
      const tracked = await liveSession();
      const { page } = tracked;
      expect(await page.textContent('#status')).toMatch(/Speak, or type below\. The session lasts until \S/);
      await say(tracked, 'Hello there.', false);
      // The interim transcript goes to the server, which echoes it back.
      await page.waitForFunction(() => document.querySelector('#hearing')?.textContent === 'Hearing: Hello there.');
      await say(tracked, 'Hello there. How are you', true);
      await turnsDone(tracked, 1);
      expect(await page.locator('.message.assistant .text').last().textContent()).toBe(
        'Echo: Hello there. How are you',
      );
      expect(await page.locator('.turn-meta').last().textContent()).toMatch(
        /^7 in \/ 6 out tokens · cost 0\.\d+ · \d+ ms$/,
      );
      // Each sentence arrived as audio and went to the player (the fake speech is not decodable audio).
      expect(await page.locator('#speech .sentence').allTextContents()).toEqual(['Echo: Hello there.', 'How are you']);
      expect(gateway.ollama.lastRequest('/api/chat')).toMatchObject({
        model: 'llama3.2:latest',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there. How are you' },
        ],
      });
      const spoken = audio.requests.filter((entry) => entry.path === '/v1/audio/speech').slice(-2);
      expect(spoken.map((entry) => (entry.body as { input: string }).input)).toEqual([
        'Echo: Hello there.',
        'How are you',
      ]);
      await tracked.screenshot(`gateway-live-turn-${backend.name}`);
      await page.click('#end');
      await page.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('Session ended'));
      expect(tracked.errors).toEqual([]);
      await tracked.context.close();
    });

    it('joins the audio pieces of a long sentence before playing it', async () => {
      const tracked = await liveSession();
      // 500 words: under the session's 1024 max_tokens, over 4096 bytes of speech.
      const words = 'lalalalala '.repeat(500).trim();
      await say(tracked, words, true);
      await turnsDone(tracked, 1);
      // One sentence, sent in 4096-byte pieces, queued as one clip of all its bytes.
      const spoken = `FAKE-mp3:Echo: ${words}`;
      expect(spoken.length).toBeGreaterThan(4096);
      const items = await tracked.page.locator('#speech li').allTextContents();
      expect(items).toHaveLength(1);
      expect(items[0]).toContain(`${spoken.length} B mp3`);
      expect(tracked.errors).toEqual([]);
      await tracked.context.close();
    });

    it('plays the spoken sentences in order when they are real audio', async () => {
      audio.playableWav = true;
      try {
        const tracked = await liveSession(async ({ page }) => {
          await page.click('summary:has-text("Voice")');
          await page.selectOption('#format', 'wav');
        });
        await say(tracked, 'First one. Second one. Third one', true);
        await turnsDone(tracked, 1);
        // One audio element plays the queue: every clip ends ("played") in the order the sentences came.
        await tracked.page.waitForFunction(
          () =>
            [...document.querySelectorAll('#speech li')].filter((item: any) => item.textContent.endsWith('played'))
              .length === 3,
        );
        expect(await tracked.page.locator('#speech .sentence').allTextContents()).toEqual([
          'Echo: First one.',
          'Second one.',
          'Third one',
        ]);
        expect(tracked.errors).toEqual([]);
        await tracked.context.close();
      } finally {
        audio.playableWav = false;
      }
    });

    it('sends the wake word settings: a question without the wake word is not answered', async () => {
      const tracked = await liveSession(async ({ page }) => {
        await page.check('#wake-enabled');
        await page.fill('#wake-words', 'hey toolbox');
        await page.selectOption('#wake-mode', 'pre');
      });
      const { page } = tracked;
      await say(tracked, 'what time is it', true);
      await page.waitForSelector('.message.user.ignored');
      await say(tracked, 'Hey Toolbox, what time is it', true);
      await turnsDone(tracked, 1);
      expect(await page.locator('.message.assistant .text').last().textContent()).toBe('Echo: what time is it');
      expect(tracked.errors).toEqual([]);
      await tracked.context.close();
    });

    it('interrupts a running answer with the button', async () => {
      const tracked = await liveSession();
      const { page } = tracked;
      gateway.ollama.tokenDelayMs = 60;
      try {
        await say(tracked, 'a b c d e f g h i j k l m n o p q r s t u v w x y z', true);
        await page.waitForFunction(
          () => (document.querySelector('.message.assistant .text')?.textContent ?? '') !== '',
        );
        await page.click('#interrupt');
        await turnsDone(tracked, 1);
        expect(await page.locator('.turn-meta').last().textContent()).toMatch(/interrupted$/);
        const answer = (await page.locator('.message.assistant .text').last().textContent()) ?? '';
        expect(answer.startsWith('Echo:')).toBe(true);
        expect(answer.length).toBeLessThan('Echo: a b c d e f g h i j k l m n o p q r s t u v w x y z'.length);
      } finally {
        gateway.ollama.tokenDelayMs = 0;
      }
      expect(tracked.errors).toEqual([]);
      await tracked.context.close();
    });

    it('without speech recognition, records the question and has the server transcribe it', async () => {
      const noRecognition = () => {
        Object.assign(window, { SpeechRecognition: undefined, webkitSpeechRecognition: undefined });
      };
      const tracked = await liveSession(undefined, noRecognition);
      const { page } = tracked;
      expect(await page.inputValue('#input-mode')).toBe('record');
      await page.click('#talk');
      await page.waitForSelector('#talk[aria-pressed="true"]');
      await page.waitForTimeout(500);
      await page.click('#talk');
      await turnsDone(tracked, 1);
      expect(await page.locator('.message.assistant .text').last().textContent()).toMatch(
        /^Echo: transcript of recording\.(webm|ogg) \(\d+ bytes\)$/,
      );
      expect(tracked.errors).toEqual([]);
      await tracked.context.close();
    });
  });
});
