import { LocalMessageBroker } from '../../broker/local-message-broker.js';
import { WsChannels } from './ws-channels.js';
import { readWsCommand, type WsCommand } from './ws-commands.js';

function setup() {
  const broker = new LocalMessageBroker();
  const published: unknown[] = [];
  void broker.subscribe('ws', (payload) => published.push(payload));
  const channels = new WsChannels(broker);
  const applied: WsCommand[] = [];
  return {
    channels,
    published,
    applied,
    local: { holds: (id: string) => id === 'here', apply: (c: WsCommand) => applied.push(c) },
  };
}

describe('WsChannels', () => {
  it('publishes every command on the ws topic when no local connections are attached', async () => {
    const { channels, published } = setup();
    await channels.send('c1', { a: 1 });
    await channels.join('c1', 'room');
    await channels.leave('c1', 'room');
    await channels.broadcast('room', 'hi', { exclude: ['c1'] });
    await channels.broadcastAll('all');
    await channels.close('c1', 4000, 'bye');
    expect(published).toEqual([
      { op: 'send', conn_id: 'c1', data: { a: 1 } },
      { op: 'join', conn_id: 'c1', channel: 'room' },
      { op: 'leave', conn_id: 'c1', channel: 'room' },
      { op: 'broadcast', channel: 'room', data: 'hi', exclude: ['c1'] },
      { op: 'broadcast_all', data: 'all' },
      { op: 'close', conn_id: 'c1', code: 4000, reason: 'bye' },
    ]);
  });

  it('applies commands for a connection this process holds directly, and still publishes broadcasts', async () => {
    const { channels, published, applied, local } = setup();
    channels.attachLocal(local);
    await channels.send('here', 1);
    await channels.join('here', 'room');
    await channels.send('elsewhere', 2);
    await channels.broadcast('room', 3);
    expect(applied).toEqual([
      { op: 'send', conn_id: 'here', data: 1 },
      { op: 'join', conn_id: 'here', channel: 'room' },
    ]);
    expect(published).toEqual([
      { op: 'send', conn_id: 'elsewhere', data: 2 },
      { op: 'broadcast', channel: 'room', data: 3 },
    ]);
  });
});

describe('readWsCommand', () => {
  it('accepts well-formed commands and refuses anything else', () => {
    expect(readWsCommand({ op: 'broadcast', channel: 'room', data: 1 })).toBeDefined();
    expect(readWsCommand({ op: 'send', conn_id: 'c', data: null })).toBeDefined();
    for (const bad of [
      null,
      'send',
      { op: 'explode' },
      { op: 'send' },
      { op: 'join', conn_id: 'c' },
      { op: 'broadcast' },
    ])
      expect(readWsCommand(bad)).toBeUndefined();
  });
});
