import { jest } from '@jest/globals';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { loadConfig } from '../../config/config.js';
import { Mailer } from './mailer.js';

const message = { to: 'ada@example.test', subject: 'Sign in', text: 'link', html: '<p>link</p>' };

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Mailer', () => {
  it('without SMTP_URL writes the line to the log and sends nothing', async () => {
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    try {
      const mailer = new Mailer(loadConfig({}).workerAuth);
      expect(mailer.delivery).toBe('log');
      await mailer.send(message, 'Magic link for ada@example.test: http://x/auth/magic/verify?token=t');
      expect(log).toHaveBeenCalledWith(
        'No SMTP_URL: mail to ada@example.test not sent. Magic link for ada@example.test: http://x/auth/magic/verify?token=t',
      );
    } finally {
      log.mockRestore();
    }
  });

  it('answers 503 (SERVICE_UNAVAILABLE) when the SMTP server cannot take the mail, and logs why', async () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const mailer = new Mailer(loadConfig({ SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` }).workerAuth);
      expect(mailer.delivery).toBe('smtp');
      await expect(mailer.send(message, 'unused')).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        message: 'The sign-in mail could not be sent; try again later',
      });
      expect(error).toHaveBeenCalledWith(expect.stringContaining('Mail to ada@example.test could not be sent'));
      mailer.onApplicationShutdown();
    } finally {
      error.mockRestore();
    }
  });
});
