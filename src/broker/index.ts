export { BrokerModule, createMessageBroker } from './broker.module.js';
export {
  IpcMessageBroker,
  isBrokerIpcMessage,
  relayBrokerMessages,
  type BrokerIpcMessage,
  type IpcPort,
} from './ipc-message-broker.js';
export { LocalMessageBroker } from './local-message-broker.js';
export { MESSAGE_BROKER, type BrokerDriver, type BrokerHandler, type MessageBroker } from './message-broker.js';
export { RedisMessageBroker } from './redis-message-broker.js';
