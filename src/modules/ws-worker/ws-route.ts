import type { FunctionEntry } from '../app-core/function-entry.js';
import type { WebsocketHandlers } from '../app-core/function-registry.js';

/** What the WS worker needs from the function registry. */
export interface WsHandlerSource {
  websocketHandlers(): ReadonlyMap<string, WebsocketHandlers>;
  entries(): FunctionEntry[];
}

export interface WsRoute {
  /** `Module/handler`. */
  key: string;
  module: string;
  handler: string;
  handlers: WebsocketHandlers;
  /** The registering function: its `level` guards the connection. */
  entry: FunctionEntry;
}

export type WsRouteResult = { route: WsRoute } | { status: 404 | 409; message: string };

/**
 * The handler a connection path names: `/ws/{Module}/{handler}` (the module may contain dots,
 * `CloudM.Auth`), or `/ws/{handler}` when exactly one module registers that handler name.
 */
export function resolveWsRoute(pathname: string, source: WsHandlerSource): WsRouteResult {
  const match = /^\/ws\/([^/]+)(?:\/([^/]+))?\/?$/.exec(pathname);
  if (!match) return { status: 404, message: 'WebSocket paths are /ws/{Module}/{handler} or /ws/{handler}' };
  let moduleName: string;
  let handler: string;
  try {
    [moduleName, handler] = match[2]
      ? [decodeURIComponent(match[1]), decodeURIComponent(match[2])]
      : ['', decodeURIComponent(match[1])];
  } catch {
    return { status: 404, message: 'malformed WebSocket path' };
  }
  const handlers = source.websocketHandlers();
  let key = `${moduleName}/${handler}`;
  if (!moduleName) {
    const candidates = [...handlers.keys()].filter((candidate) => candidate.endsWith(`/${handler}`));
    if (candidates.length > 1)
      return {
        status: 409,
        message: `handler ${handler} is registered by several modules: use /ws/{Module}/${handler}`,
      };
    if (candidates.length === 0) return { status: 404, message: `no WebSocket handler ${handler}` };
    key = candidates[0];
    moduleName = key.slice(0, key.length - handler.length - 1);
  }
  const found = handlers.get(key);
  const entry = source
    .entries()
    .find((candidate) => candidate.module === moduleName && candidate.options.websocketHandler === handler);
  if (!found || !entry) return { status: 404, message: `no WebSocket handler ${key}` };
  return { route: { key, module: moduleName, handler, handlers: found, entry } };
}
