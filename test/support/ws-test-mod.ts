import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A plain-JavaScript mod for the WebSocket worker suites, written into a mods directory. Module `chat`:
 * handler `room` (anyone) joins `lobby` on connect and acts on `{action: …}` messages; `members` (level 1),
 * `trusted` (level 2) and `admin` (level -1) guard by level; `announce` is an `api` function an HTTP worker
 * serves, broadcasting to a channel through `app.ws`, and `notify` one sending to one connection. The
 * suites list `chat` in OPEN_MODULES; module `vault` is not open: `lounge` needs a session, `open_lounge`
 * is open by its name.
 */
const SOURCE = `
export class ChatMod {
  static modName = 'chat';
  static exports = {
    room: { websocketHandler: 'room', test: false },
    members: { websocketHandler: 'members', level: 1, test: false },
    trusted: { websocketHandler: 'trusted', level: 2, test: false },
    admin: { websocketHandler: 'admin', level: -1, test: false },
    announce: { api: true, apiMethods: ['POST'], test: false },
    notify: { api: true, apiMethods: ['POST'], test: false },
    secret: { level: 1, test: false },
  };
  constructor(context) { this.context = context; }
  announce(channel, text) {
    return this.context.app.ws.broadcast(channel, { type: 'announce', text }).then(() => ({ sent: true }));
  }
  notify(conn_id, text) {
    return this.context.app.ws.send(conn_id, { type: 'notify', text }).then(() => ({ sent: true }));
  }
  secret() { return 'the secret'; }
  room() {
    const app = this.context.app;
    return {
      on_connect: async (ws) => { await ws.join('lobby'); },
      on_message: async (ws, message) => {
        if (typeof message !== 'object' || message === null) return { echo: message };
        switch (message.action) {
          case 'echo': return { echo: message.data };
          case 'slow_echo': await new Promise((resolve) => setTimeout(resolve, message.delay)); return { echo: message.data };
          case 'whoami': return { session: ws.session, caller: ws.caller, handler: ws.handler, conn_id: ws.conn_id };
          case 'join': await ws.join(message.channel); return { joined: message.channel };
          case 'leave': await ws.leave(message.channel); return { left: message.channel };
          case 'say': await ws.broadcast(message.channel, { from: ws.conn_id, text: message.text }); return undefined;
          case 'say_others': await ws.broadcast(message.channel, { from: ws.conn_id, text: message.text }, { exclude: [ws.conn_id] }); return undefined;
          case 'all': await app.ws.broadcastAll({ all: message.text }); return undefined;
          case 'send_to': await app.ws.send(message.conn_id, { direct: message.text, from: ws.conn_id }); return undefined;
          case 'kick': await app.ws.close(message.conn_id, 4000, 'kicked'); return undefined;
          case 'run': return await app.aRunFunction([message.module, message.function], { kwargs: message.kwargs ?? {} });
          case 'throw': throw new Error('handler bug');
          default: return { unknown: message.action ?? null };
        }
      },
    };
  }
  members() { return { on_message: (ws, message) => ({ members: message, level: ws.session.level }) }; }
  trusted() { return { on_message: (ws, message) => ({ trusted: message, level: ws.session.level }) }; }
  admin() { return { on_message: (ws, message) => ({ admin: message, level: ws.session.level }) }; }
}

export class VaultMod {
  static modName = 'vault';
  static exports = {
    lounge: { websocketHandler: 'lounge', test: false },
    openLounge: { websocketHandler: 'open_lounge', test: false },
  };
  lounge() { return { on_message: (ws) => ({ lounge: ws.session.user_id }) }; }
  openLounge() { return { on_message: (ws) => ({ open_lounge: ws.session.user_id }) }; }
}
`;

export async function writeWsTestMod(modsDir: string): Promise<void> {
  const directory = join(modsDir, 'chat-mod');
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'tb-mod.json'), JSON.stringify({ name: 'chat-mod', version: '1.0.0' }));
  await writeFile(join(directory, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(directory, 'index.js'), SOURCE);
}
