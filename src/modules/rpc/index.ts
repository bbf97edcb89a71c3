/** Public API of the peer-to-peer RPC module (request/response messages over libp2p). */
export {
  ANY_PEER,
  AccessPolicyStore,
  DEFAULT_ANY_PEER_LEVEL,
  DEFAULT_PEER_LEVEL,
  decide,
  policyPath,
  validatePattern,
  validatePeer,
  type AccessDecision,
  type AccessPolicyDocument,
  type PeerGrant,
} from './access-policy.js';
export { FrameDecoder, encodeFrame, sniffCallId, type FrameEvent } from './framing.js';
export { loadOrCreatePeerKey, peerIdOf, peerKeyPath } from './identity.js';
export {
  RPC_ERROR,
  RPC_LOCAL_CODE,
  RPC_PROTOCOL,
  parseRequest,
  parseResponse,
  responseToResult,
  type RpcErrorObject,
  type RpcRequest,
  type RpcResponse,
} from './messages.js';
export {
  NO_ANSWER,
  RpcClient,
  normalizePeer,
  type RpcCallOptions,
  type RpcClientStats,
  type RpcPeer,
} from './rpc-client.js';
export { createRpcNode, parseMultiaddrs, type RpcNodeOptions } from './rpc-node.js';
export { DEFAULT_RPC_SETTINGS, RpcPeerNode, type RpcSettings, type StartRpcPeerOptions } from './rpc-peer.js';
export { RpcProvider, type RpcProviderLogger, type RpcProviderOptions, type RpcProviderStats } from './rpc-provider.js';
export { RPC_MODULE_OPTIONS, RpcModule, RpcService, type RpcModuleOptions } from './rpc.module.js';
