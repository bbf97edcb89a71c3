/**
 * The origins the HTTP worker answers with credentials, as the original: the Tauri app
 * (`tauri://localhost`, `http(s)://tauri.localhost`), any port of `localhost` / `127.0.0.1` over http(s),
 * and the operator's CORS_ORIGINS (`*` reflects every origin).
 */
const BUILT_IN =
  /^(?:tauri:\/\/localhost|https?:\/\/tauri\.localhost|https?:\/\/(?:localhost|127\.0\.0\.1)(?::\d{1,5})?)$/i;

export function corsOriginRule(configured: readonly string[]): (origin: string) => boolean {
  const anyOrigin = configured.includes('*');
  const listed = new Set(configured.map((origin) => origin.toLowerCase()));
  return (origin) => anyOrigin || BUILT_IN.test(origin) || listed.has(origin.toLowerCase());
}
