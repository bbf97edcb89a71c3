import { InboundAdmission, addressKey, type InboundLimits } from './inbound-admission.js';

const limits: InboundLimits = {
  maxConnectionsPerAddress: 6,
  maxPendingPerAddress: 3,
  connectionsPerSecond: 5,
  allowedPeerConnectionsPerSecond: 20,
  allowedAddressTtlMs: 60_000,
};

function admission() {
  const clock = { now: 1_000_000 };
  return { clock, gate: new InboundAdmission(limits, () => clock.now) };
}

describe('addressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::9', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1', 'fe80:0:0:0::/64'],
  ])('keys %s as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});

describe('InboundAdmission', () => {
  it('refuses an address past its pending upgrades and admits it again once one settles', () => {
    const { gate } = admission();
    const keys = [1, 2, 3].map(() => gate.admit('198.51.100.1'));
    expect(keys.every((each) => each.admitted)).toBe(true);
    expect(gate.admit('198.51.100.1')).toEqual({
      admitted: false,
      reason: '3 connections from 198.51.100.1 are still in their upgrade',
    });
    // Another address is not affected.
    expect(gate.admit('198.51.100.2').admitted).toBe(true);
    gate.upgraded('198.51.100.1');
    expect(gate.countsOf('198.51.100.1')).toEqual({ pending: 2, open: 3 });
    expect(gate.admit('198.51.100.1').admitted).toBe(true);
    // A connection closing in its upgrade frees both slots.
    gate.closed('198.51.100.1', true);
    expect(gate.countsOf('198.51.100.1')).toEqual({ pending: 2, open: 3 });
  });

  it('counts every address of one IPv6 /64 together', () => {
    const { gate } = admission();
    for (const suffix of ['1', '2', '3']) expect(gate.admit(`2001:db8:0:7::${suffix}`).admitted).toBe(true);
    expect(gate.admit('2001:db8:0:7::4').admitted).toBe(false);
    expect(gate.admit('2001:db8:0:8::1').admitted).toBe(true);
  });

  it('limits new connections per address and second, and starts a new second', () => {
    const { clock, gate } = admission();
    for (let index = 0; index < 5; index++) {
      expect(gate.admit('192.0.2.9').admitted).toBe(true);
      gate.closed('192.0.2.9', true);
    }
    expect(gate.admit('192.0.2.9')).toEqual({ admitted: false, reason: '192.0.2.9 opened 5 connections this second' });
    clock.now += 1000;
    expect(gate.admit('192.0.2.9').admitted).toBe(true);
  });

  it('gives an address an allowed peer connected from the higher rate until it expires', () => {
    const { clock, gate } = admission();
    gate.vouch('192.0.2.10');
    for (let index = 0; index < 20; index++) {
      expect(gate.admit('192.0.2.10').admitted).toBe(true);
      gate.closed('192.0.2.10', true);
    }
    expect(gate.admit('192.0.2.10').admitted).toBe(false);
    clock.now += 60_000;
    for (let index = 0; index < 5; index++) {
      expect(gate.admit('192.0.2.10').admitted).toBe(true);
      gate.closed('192.0.2.10', true);
    }
    expect(gate.admit('192.0.2.10').admitted).toBe(false);
  });

  it('refuses an address past its open connections until one closes', () => {
    const { clock, gate } = admission();
    for (let index = 0; index < 6; index++) {
      if (index === 3) clock.now += 1000;
      expect(gate.admit('192.0.2.12').admitted).toBe(true);
      gate.upgraded('192.0.2.12');
    }
    clock.now += 1000;
    expect(gate.admit('192.0.2.12')).toEqual({ admitted: false, reason: '6 connections from 192.0.2.12 are open' });
    gate.closed('192.0.2.12', false);
    expect(gate.countsOf('192.0.2.12')).toEqual({ pending: 0, open: 5 });
    expect(gate.admit('192.0.2.12').admitted).toBe(true);
  });

  it('never lets an allowed address exceed its pending upgrades', () => {
    const { gate } = admission();
    gate.vouch('192.0.2.11');
    for (let index = 0; index < 3; index++) expect(gate.admit('192.0.2.11').admitted).toBe(true);
    expect(gate.admit('192.0.2.11').admitted).toBe(false);
  });
});
