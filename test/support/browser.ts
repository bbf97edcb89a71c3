import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium: never a downloaded browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots for a person to look at; ignored by git. */
export const SCREENSHOT_DIR = resolve(process.env.TEST_ARTIFACTS_DIR ?? 'test-artifacts', 'screenshots');

/**
 * This machine's network is closed: without the background-networking flags Chromium keeps opening connections
 * that are refused, and looks up Google's hosts at every start.
 */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
];

export interface BrowserUnderTest {
  browser: Browser;
  /** A fresh page (own context) that records console errors, page errors and failed requests. */
  newPage(options?: { viewport?: { width: number; height: number } }): Promise<TrackedPage>;
  close(): Promise<void>;
}

export interface TrackedPage {
  page: Page;
  context: BrowserContext;
  /** Console `error` messages and uncaught exceptions, in order. */
  errors: string[];
  /** Bytes received per response, by resource type, for the page-weight budget. */
  transferred: { url: string; type: string; bytes: number }[];
  screenshot(name: string): Promise<string>;
}

export async function startBrowser(): Promise<BrowserUnderTest> {
  // Playwright gives every launch a new empty profile of its own.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 900 },
        permissions: ['microphone'],
      });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      const transferred: TrackedPage['transferred'] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') {
          const where = message.location().url;
          errors.push(`console: ${message.text()}${where ? ` (${where})` : ''}`);
        }
      });
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      page.on('requestfinished', (request) => {
        void request
          .sizes()
          .then((sizes) =>
            transferred.push({
              url: request.url(),
              type: request.resourceType(),
              bytes: sizes.responseBodySize + sizes.responseHeadersSize,
            }),
          )
          .catch(() => undefined);
      });
      return {
        page,
        context,
        errors,
        transferred,
        async screenshot(name: string) {
          mkdirSync(SCREENSHOT_DIR, { recursive: true });
          const path = join(SCREENSHOT_DIR, `${name}.png`);
          await page.screenshot({ path, fullPage: true });
          return path;
        },
      };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/** Transferred JS + CSS of a page, in bytes (the budget counts what the page itself loads, not API answers). */
export function scriptAndStyleBytes(page: TrackedPage): number {
  return page.transferred
    .filter((entry) => entry.type === 'script' || entry.type === 'stylesheet')
    .reduce((sum, entry) => sum + entry.bytes, 0);
}

/** First contentful paint of the current document, in ms (0 when the browser reported none). */
export async function firstRenderMs(page: Page): Promise<number> {
  return page.evaluate(() => {
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    return paint ? paint.startTime : 0;
  });
}
