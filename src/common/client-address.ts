import type { IncomingMessage } from 'node:http';
import type { Application } from 'express';

/**
 * The client address of a request Express never routes (a WebSocket upgrade), decided as Express decides
 * `request.ip` for the same application: the socket's peer, or the address a proxy put in X-Forwarded-For when the
 * app's `trust proxy` setting trusts that peer. One rule, so a client has one address on every route and upgrade.
 */
export function clientAddressOf(request: IncomingMessage, app: Application): string {
  // Express's own `ip` getter on a view of the raw request (the prototype Express gives the requests it routes).
  const view = Object.create((app as Application & { request: object }).request, {
    headers: { value: request.headers },
    socket: { value: request.socket },
    connection: { value: request.socket },
  }) as { ip?: string };
  return view.ip ?? request.socket.remoteAddress ?? '';
}
