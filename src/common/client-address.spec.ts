import type { IncomingMessage } from 'node:http';
import express from 'express';
import { clientAddressOf } from './client-address.js';

const upgrade = (peer: string, forwardedFor?: string) =>
  ({
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    socket: { remoteAddress: peer },
  }) as unknown as IncomingMessage;

describe('clientAddressOf', () => {
  const app = express();
  app.set('trust proxy', 'loopback');

  it('takes the forwarded address from a proxy on loopback', () => {
    expect(clientAddressOf(upgrade('127.0.0.1', '203.0.113.7'), app)).toBe('203.0.113.7');
  });

  it('takes the nearest untrusted hop of a forwarded chain', () => {
    expect(clientAddressOf(upgrade('127.0.0.1', '198.51.100.1, 203.0.113.7'), app)).toBe('203.0.113.7');
  });

  it('ignores X-Forwarded-For from a peer that is no trusted proxy', () => {
    expect(clientAddressOf(upgrade('192.0.2.10', '203.0.113.7'), app)).toBe('192.0.2.10');
  });

  it('takes the peer when nothing is forwarded', () => {
    expect(clientAddressOf(upgrade('::ffff:192.0.2.10'), app)).toBe('::ffff:192.0.2.10');
  });

  it("follows the app's own setting: without trust proxy the peer always", () => {
    const strict = express();
    strict.set('trust proxy', false);
    expect(clientAddressOf(upgrade('127.0.0.1', '203.0.113.7'), strict)).toBe('127.0.0.1');
  });
});
