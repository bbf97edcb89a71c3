import { ConnectionHub, type HubPeer } from './connection-hub.js';

function peer(id: string): HubPeer & { frames: string[]; closed: Array<[number, string]> } {
  const frames: string[] = [];
  const closed: Array<[number, string]> = [];
  return {
    id,
    frames,
    closed,
    send: (text) => frames.push(text),
    close: (code, reason) => closed.push([code, reason]),
  };
}

describe('ConnectionHub', () => {
  it('sends to one held connection, strings as is and other values as JSON', () => {
    const hub = new ConnectionHub();
    const a = peer('a');
    hub.add(a);
    expect(hub.apply({ op: 'send', conn_id: 'a', data: 'plain' })).toBe(1);
    expect(hub.apply({ op: 'send', conn_id: 'a', data: { n: 1 } })).toBe(1);
    expect(a.frames).toEqual(['plain', '{"n":1}']);
  });

  it('ignores commands for connections another worker holds', () => {
    const hub = new ConnectionHub();
    hub.add(peer('a'));
    expect(hub.apply({ op: 'send', conn_id: 'elsewhere', data: 1 })).toBe(0);
    expect(hub.apply({ op: 'join', conn_id: 'elsewhere', channel: 'room' })).toBe(0);
    expect(hub.apply({ op: 'close', conn_id: 'elsewhere' })).toBe(0);
    expect(hub.membersOf('room')).toEqual([]);
  });

  it('broadcasts to the members of a channel only, minus the excluded', () => {
    const hub = new ConnectionHub();
    const [a, b, c] = [peer('a'), peer('b'), peer('c')];
    [a, b, c].forEach((each) => hub.add(each));
    hub.apply({ op: 'join', conn_id: 'a', channel: 'room' });
    hub.apply({ op: 'join', conn_id: 'b', channel: 'room' });
    expect(hub.apply({ op: 'broadcast', channel: 'room', data: 'hi', exclude: ['a'] })).toBe(1);
    expect([a.frames, b.frames, c.frames]).toEqual([[], ['hi'], []]);
  });

  it('broadcasts to every connection with broadcast_all', () => {
    const hub = new ConnectionHub();
    const [a, b] = [peer('a'), peer('b')];
    [a, b].forEach((each) => hub.add(each));
    expect(hub.apply({ op: 'broadcast_all', data: [1] })).toBe(2);
    expect([a.frames, b.frames]).toEqual([['[1]'], ['[1]']]);
  });

  it('stops broadcasting to a connection that left the channel', () => {
    const hub = new ConnectionHub();
    const a = peer('a');
    hub.add(a);
    hub.apply({ op: 'join', conn_id: 'a', channel: 'room' });
    hub.apply({ op: 'leave', conn_id: 'a', channel: 'room' });
    expect(hub.apply({ op: 'broadcast', channel: 'room', data: 'x' })).toBe(0);
    expect([a.frames, hub.channels('a')]).toEqual([[], []]);
  });

  it('forgets every membership of a removed connection', () => {
    const hub = new ConnectionHub();
    hub.add(peer('a'));
    hub.add(peer('b'));
    hub.apply({ op: 'join', conn_id: 'a', channel: 'one' });
    hub.apply({ op: 'join', conn_id: 'a', channel: 'two' });
    hub.apply({ op: 'join', conn_id: 'b', channel: 'two' });
    hub.remove('a');
    expect([hub.size, hub.holds('a'), hub.membersOf('one'), hub.membersOf('two')]).toEqual([1, false, [], ['b']]);
  });

  it('closes a held connection with the code and reason given (1000 by default)', () => {
    const hub = new ConnectionHub();
    const a = peer('a');
    hub.add(a);
    hub.apply({ op: 'close', conn_id: 'a', code: 4001, reason: 'kicked' });
    hub.apply({ op: 'close', conn_id: 'a' });
    expect(a.closed).toEqual([
      [4001, 'kicked'],
      [1000, ''],
    ]);
  });
});
