export { ConnectionHub, type HubPeer } from './connection-hub.js';
export { resolveWsRoute, type WsRoute } from './ws-route.js';
export { WsWorkerModule } from './ws-worker.module.js';
export { WS_CLOSE, WsWorkerServer, type WsConnectionContext, type WsWorkerStats } from './ws-worker.server.js';
export type { WsSession } from './ws-session.js';
