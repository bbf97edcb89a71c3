import { WebSocket as NodeWebSocket } from 'ws';

/**
 * js-libp2p 3.x relies on two globals Node.js has from version 22 on: `Promise.withResolvers` (ES2024)
 * and the WHATWG `WebSocket` client (the WebSocket transport dials with it). The platform runs on
 * Node 20, so the RPC module installs standard-conforming fallbacks before it loads libp2p: the method
 * below, and the `ws` package's WebSocket (which implements the same browser interface). On Node 22+ the
 * native ones are kept.
 */
interface PromiseWithResolversShape<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const promiseConstructor = Promise as unknown as { withResolvers?: <T>() => PromiseWithResolversShape<T> };

if (typeof promiseConstructor.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor): PromiseWithResolversShape<T> {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new this<T>((onResolve, onReject) => {
        resolve = onResolve;
        reject = onReject;
      });
      return { promise, resolve, reject };
    },
  });
}

const globals = globalThis as unknown as { WebSocket?: unknown };
if (typeof globals.WebSocket === 'undefined') globals.WebSocket = NodeWebSocket;

export {};
