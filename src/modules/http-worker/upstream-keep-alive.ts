/**
 * The keep-alive contract between nginx and the HTTP workers. nginx does not resend a POST whose request went out
 * on an upstream connection that then fails (its non-idempotent rule, cached keep-alive connections included), so a
 * worker must never close a connection nginx may be sending on: nginx closes idle upstream connections after
 * `PROXY_UPSTREAM_IDLE_SECONDS` (the site's upstream `keepalive_timeout`), a worker only after
 * `WORKER_KEEP_ALIVE_TIMEOUT_MS`, far longer; a draining worker closes a connection only once nginx has had time
 * to close it (`DRAIN_IDLE_CONNECTION_MS` idle).
 */
export const PROXY_UPSTREAM_IDLE_SECONDS = 4;

/** Node's default, 5 s, is barely above nginx's 4 s: a timer's slack would let the worker close first. */
export const WORKER_KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** A connection idle this long during a drain: nginx has closed it (or it is not nginx's), so closing it is safe. */
export const DRAIN_IDLE_CONNECTION_MS = (PROXY_UPSTREAM_IDLE_SECONDS + 1) * 1000;
