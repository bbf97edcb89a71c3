import type { MessageBroker } from '../../broker/message-broker.js';
import { WS_BROKER_TOPIC, type WsCommand } from './ws-commands.js';

/**
 * Commands for connections this process holds, applied without a trip through the broker (the WS worker
 * registers itself here). Broadcasts always go through the broker: other workers hold members too.
 */
export interface LocalWsConnections {
  holds(connId: string): boolean;
  apply(command: WsCommand): void;
}

export interface BroadcastOptions {
  /** Connection ids that do not receive it (typically the sender). */
  exclude?: string[];
}

/**
 * The application core's API to WebSocket connections, usable from any function in any worker (HTTP or
 * WS): send to one connection, join and leave channels, broadcast to a channel or to everyone, close.
 * Commands travel over the platform's message broker to the WS worker that holds the connection, so an
 * HTTP worker's function reaches connections of every WS worker (Redis, or the manager's relay).
 * Mods reach it as `context.app.ws`; Nest providers inject `WsChannels`.
 */
export class WsChannels {
  private local: LocalWsConnections | null = null;

  constructor(private readonly broker: MessageBroker) {}

  /** The WS worker of this process registers its connections (null to detach). */
  attachLocal(local: LocalWsConnections | null): void {
    this.local = local;
  }

  /** Sends `data` (a string as is, anything else as JSON) to one connection. */
  send(connId: string, data: unknown): Promise<void> {
    return this.command({ op: 'send', conn_id: connId, data });
  }

  /** Adds a connection to `channel`; it leaves every channel when it closes. */
  join(connId: string, channel: string): Promise<void> {
    return this.command({ op: 'join', conn_id: connId, channel });
  }

  leave(connId: string, channel: string): Promise<void> {
    return this.command({ op: 'leave', conn_id: connId, channel });
  }

  /** Sends `data` to every member of `channel`, on every WS worker. */
  broadcast(channel: string, data: unknown, options: BroadcastOptions = {}): Promise<void> {
    return this.publish({
      op: 'broadcast',
      channel,
      data,
      ...(options.exclude?.length ? { exclude: options.exclude } : {}),
    });
  }

  /** Sends `data` to every connection of every WS worker. */
  broadcastAll(data: unknown, options: BroadcastOptions = {}): Promise<void> {
    return this.publish({
      op: 'broadcast_all',
      data,
      ...(options.exclude?.length ? { exclude: options.exclude } : {}),
    });
  }

  /** Closes one connection (1000 normal closure unless told otherwise). */
  close(connId: string, code = 1000, reason = ''): Promise<void> {
    return this.command({ op: 'close', conn_id: connId, code, reason });
  }

  private async command(command: Extract<WsCommand, { conn_id: string }>): Promise<void> {
    if (this.local?.holds(command.conn_id)) {
      this.local.apply(command);
      return;
    }
    await this.publish(command);
  }

  private publish(command: WsCommand): Promise<void> {
    return this.broker.publish(WS_BROKER_TOPIC, command);
  }
}
