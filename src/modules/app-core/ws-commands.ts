/**
 * What the application core asks the WebSocket workers to do, published on the broker topic `ws`
 * (payload of `{tb:'bus', channel:'ws', payload}` over IPC, or of the Redis channel `<prefix>:broker:ws`).
 * Every WS worker receives every command and applies it to the connections it holds; a command for a
 * connection id it does not hold is ignored. `data` is any JSON value: a string is sent as a text frame
 * as is, anything else as its JSON text.
 */
export type WsCommand =
  | { op: 'send'; conn_id: string; data: unknown }
  | { op: 'broadcast'; channel: string; data: unknown; exclude?: string[] }
  | { op: 'broadcast_all'; data: unknown; exclude?: string[] }
  | { op: 'join'; conn_id: string; channel: string }
  | { op: 'leave'; conn_id: string; channel: string }
  | { op: 'close'; conn_id: string; code?: number; reason?: string };

export const WS_BROKER_TOPIC = 'ws';

const OPS: ReadonlySet<string> = new Set(['send', 'broadcast', 'broadcast_all', 'join', 'leave', 'close']);

/** The command in `payload`, or undefined when it is not one (another version, a stray publisher). */
export function readWsCommand(payload: unknown): WsCommand | undefined {
  const command = payload as Partial<WsCommand> & Record<string, unknown>;
  if (!command || typeof command !== 'object' || typeof command.op !== 'string' || !OPS.has(command.op))
    return undefined;
  const text = (key: string) => typeof command[key] === 'string' && (command[key] as string).length > 0;
  switch (command.op) {
    case 'send':
      return text('conn_id') ? (command as WsCommand) : undefined;
    case 'join':
    case 'leave':
      return text('conn_id') && text('channel') ? (command as WsCommand) : undefined;
    case 'broadcast':
      return text('channel') ? (command as WsCommand) : undefined;
    case 'close':
      return text('conn_id') ? (command as WsCommand) : undefined;
    default:
      return command as WsCommand;
  }
}

/** The text frame for `data`. */
export function wsFrameText(data: unknown): string {
  return typeof data === 'string' ? data : JSON.stringify(data ?? null);
}
