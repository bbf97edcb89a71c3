/**
 * js-libp2p 3.x calls `Promise.withResolvers` (ES2024), which Node.js has from version 22 on. The
 * platform runs on Node 20, so the RPC module installs the standard-conforming fallback before it
 * loads libp2p. Nothing else changes: on Node 22+ the native method is kept.
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

export {};
