import { isLocalAddress, normaliseAddress } from './local-address.js';
import { ProbeController, geoAnswerFor } from './probe.controller.js';

describe('isLocalAddress', () => {
  it('treats loopback, private and link-local addresses as local', () => {
    expect(
      [
        '127.0.0.1',
        '::1',
        '10.1.2.3',
        '172.16.0.1',
        '172.31.255.255',
        '192.168.1.1',
        '169.254.0.1',
        'fd00::1',
        'fe80::1',
        '::ffff:192.168.0.2',
      ].every(isLocalAddress),
    ).toBe(true);
  });

  it('treats public addresses as not local', () => {
    expect(['8.8.8.8', '172.32.0.1', '2001:4860::8888', 'not-an-ip'].some(isLocalAddress)).toBe(false);
  });

  it('strips the IPv4-mapped prefix', () => {
    expect(normaliseAddress('::ffff:10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('ProbeController', () => {
  const controller = new ProbeController();

  it('answers ping with pong and an ISO timestamp', () => {
    const answer = controller.ping();
    expect(answer.status).toBe('pong');
    expect(answer.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
  });

  it('answers geo for a loopback caller as local without error', () => {
    expect(controller.geo({ ip: '::ffff:127.0.0.1' })).toEqual({
      ip: '127.0.0.1',
      local: true,
      country: null,
      region: null,
      city: null,
      latitude: null,
      longitude: null,
      timezone: null,
    });
  });

  it('answers geo for a public caller with an error and no lookup', () => {
    expect(geoAnswerFor('8.8.8.8')).toMatchObject({ ip: '8.8.8.8', local: false, error: 'geolocation unavailable' });
  });
});
