import { wsFrameText, type WsCommand } from '../app-core/ws-commands.js';

/** One open connection as the hub sees it (a `ws` socket in the worker, a fake in unit specs). */
export interface HubPeer {
  readonly id: string;
  send(text: string): void;
  close(code: number, reason: string): void;
}

/**
 * The connections one WS worker holds and their channel memberships. Pure: the worker feeds it sockets
 * and the commands it receives from the broker; commands for connections held elsewhere are ignored.
 */
export class ConnectionHub {
  private readonly peers = new Map<string, HubPeer>();
  private readonly members = new Map<string, Set<string>>();
  private readonly channelsOf = new Map<string, Set<string>>();

  get size(): number {
    return this.peers.size;
  }

  add(peer: HubPeer): void {
    this.peers.set(peer.id, peer);
  }

  /** Forgets a connection and its memberships (after it closed). */
  remove(connId: string): void {
    this.peers.delete(connId);
    for (const channel of this.channelsOf.get(connId) ?? []) this.leave(connId, channel);
    this.channelsOf.delete(connId);
  }

  holds(connId: string): boolean {
    return this.peers.has(connId);
  }

  /** Channels the connection is a member of. */
  channels(connId: string): string[] {
    return [...(this.channelsOf.get(connId) ?? [])];
  }

  /** Members of `channel` held here. */
  membersOf(channel: string): string[] {
    return [...(this.members.get(channel) ?? [])];
  }

  /** Applies a broker command; returns how many local connections it reached. */
  apply(command: WsCommand): number {
    switch (command.op) {
      case 'send': {
        const peer = this.peers.get(command.conn_id);
        if (!peer) return 0;
        peer.send(wsFrameText(command.data));
        return 1;
      }
      case 'join':
        return this.join(command.conn_id, command.channel) ? 1 : 0;
      case 'leave':
        return this.leave(command.conn_id, command.channel) ? 1 : 0;
      case 'close': {
        const peer = this.peers.get(command.conn_id);
        if (!peer) return 0;
        peer.close(command.code ?? 1000, command.reason ?? '');
        return 1;
      }
      case 'broadcast':
        return this.sendToAll(this.membersOf(command.channel), command.data, command.exclude);
      case 'broadcast_all':
        return this.sendToAll([...this.peers.keys()], command.data, command.exclude);
    }
  }

  private join(connId: string, channel: string): boolean {
    if (!this.peers.has(connId)) return false;
    let set = this.members.get(channel);
    if (!set) this.members.set(channel, (set = new Set()));
    set.add(connId);
    let joined = this.channelsOf.get(connId);
    if (!joined) this.channelsOf.set(connId, (joined = new Set()));
    joined.add(channel);
    return true;
  }

  private leave(connId: string, channel: string): boolean {
    const set = this.members.get(channel);
    if (!set?.delete(connId)) return false;
    if (set.size === 0) this.members.delete(channel);
    this.channelsOf.get(connId)?.delete(channel);
    return true;
  }

  private sendToAll(connIds: string[], data: unknown, exclude: string[] = []): number {
    const skipped = new Set(exclude);
    // Serialised once for every recipient.
    const text = wsFrameText(data);
    let reached = 0;
    for (const connId of connIds) {
      const peer = this.peers.get(connId);
      if (!peer || skipped.has(connId)) continue;
      peer.send(text);
      reached += 1;
    }
    return reached;
  }
}
