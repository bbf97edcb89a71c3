import { addressKey, ConnectionSlots, type ConnectionSlot } from './connection-slots.js';

const limits = { total: 10, perAddress: 3, perUser: 2, anonymous: 6 };

/** A slot reserved and assigned, or the refusal on the way. */
function connect(slots: ConnectionSlots, address: string, userId: string | null): ConnectionSlot | string {
  const slot = slots.reserve(address);
  if (typeof slot === 'string') return slot;
  const refusal = slot.assign(userId);
  if (refusal) {
    slot.release();
    return refusal;
  }
  return slot;
}

describe('ConnectionSlots', () => {
  it('refuses the handshake past the per-address limit and takes one from another address', () => {
    const slots = new ConnectionSlots(limits);
    for (let i = 0; i < 3; i++) expect(typeof slots.reserve('192.0.2.1')).toBe('object');
    expect(slots.reserve('192.0.2.1')).toBe('address');
    expect(typeof slots.reserve('192.0.2.2')).toBe('object');
  });

  it('refuses a user past the per-user limit whatever the address', () => {
    const slots = new ConnectionSlots(limits);
    expect(typeof connect(slots, '192.0.2.1', 'ada')).toBe('object');
    expect(typeof connect(slots, '192.0.2.2', 'ada')).toBe('object');
    expect(connect(slots, '192.0.2.3', 'ada')).toBe('user');
    expect(typeof connect(slots, '192.0.2.3', 'bob')).toBe('object');
  });

  it('keeps the slots past the anonymous share for signed-in users', () => {
    const slots = new ConnectionSlots(limits);
    for (let i = 0; i < 6; i++) expect(typeof connect(slots, `192.0.2.${i}`, null)).toBe('object');
    expect(connect(slots, '192.0.2.100', null)).toBe('anonymous');
    for (const [i, user] of ['ada', 'bob', 'cy', 'dee'].entries())
      expect(typeof connect(slots, `198.51.100.${i}`, user)).toBe('object');
    expect(slots.reserve('198.51.100.9')).toBe('overloaded');
  });

  it('refuses everyone once the total is reached', () => {
    const slots = new ConnectionSlots({ ...limits, perAddress: 100, perUser: 100, anonymous: 10 });
    for (let i = 0; i < 10; i++) connect(slots, '192.0.2.1', `u${i}`);
    expect(slots.size).toBe(10);
    expect(slots.reserve('192.0.2.9')).toBe('overloaded');
  });

  it('counts a handshake before its credential is known, so concurrent ones cannot pass a limit together', () => {
    const slots = new ConnectionSlots(limits);
    const pending = [slots.reserve('192.0.2.1'), slots.reserve('192.0.2.1'), slots.reserve('192.0.2.1')];
    expect(pending.every((slot) => typeof slot === 'object')).toBe(true);
    expect(slots.reserve('192.0.2.1')).toBe('address');
  });

  it('frees every count on release, once however often it is called', () => {
    const slots = new ConnectionSlots(limits);
    const held = [connect(slots, '192.0.2.1', 'ada'), connect(slots, '192.0.2.1', 'ada')] as ConnectionSlot[];
    expect(connect(slots, '192.0.2.1', 'ada')).toBe('user');
    held[0].release();
    held[0].release();
    expect(slots.size).toBe(1);
    expect(typeof connect(slots, '192.0.2.1', 'ada')).toBe('object');
    expect(slots.size).toBe(2);
  });

  it('frees the anonymous count of a released anonymous slot', () => {
    const slots = new ConnectionSlots({ ...limits, anonymous: 1 });
    const first = connect(slots, '192.0.2.1', null) as ConnectionSlot;
    expect(connect(slots, '192.0.2.2', null)).toBe('anonymous');
    first.release();
    expect(typeof connect(slots, '192.0.2.2', null)).toBe('object');
  });

  it('lets no anonymous connection in with a share of 0', () => {
    const slots = new ConnectionSlots({ ...limits, anonymous: 0 });
    expect(connect(slots, '192.0.2.1', null)).toBe('anonymous');
    expect(typeof connect(slots, '192.0.2.1', 'ada')).toBe('object');
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['unknown', 'unknown'],
  ])('counts %s under %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('puts two addresses of one /64 under one key and a neighbouring /64 under another', () => {
    expect(addressKey('2001:db8:1:2::a')).toBe(addressKey('2001:db8:1:2:ffff::b'));
    expect(addressKey('2001:db8:1:3::a')).not.toBe(addressKey('2001:db8:1:2::a'));
  });
});
