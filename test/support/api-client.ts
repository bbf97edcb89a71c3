import { readFile } from 'node:fs/promises';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  bytes: Buffer;
}

export type FormValue = string | { filename: string; content: Buffer | Uint8Array; type?: string };

/** A thin fetch wrapper for e2e tests: JSON in, JSON (or bytes) out, with an optional bearer token. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly bearer?: string,
  ) {}

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  get<T = any>(path: string, headers: Record<string, string> = {}) {
    return this.request<T>('GET', path, undefined, headers);
  }

  head(path: string) {
    return this.request('HEAD', path);
  }

  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }

  post<T = any>(path: string, json?: unknown, headers: Record<string, string> = {}) {
    return this.request<T>('POST', path, json, headers);
  }

  patch<T = any>(path: string, json?: unknown) {
    return this.request<T>('PATCH', path, json);
  }

  async postForm<T = any>(path: string, fields: Record<string, FormValue>): Promise<ApiResponse<T>> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([value.content], { type: value.type ?? 'application/zip' }), value.filename);
    }
    return this.send<T>('POST', path, { body: form });
  }

  async postFile<T = any>(path: string, fields: Record<string, string>, filePath: string): Promise<ApiResponse<T>> {
    return this.postForm<T>(path, { ...fields, file: { filename: 'package.zip', content: await readFile(filePath) } });
  }

  async request<T = any>(
    method: string,
    path: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const init: RequestInit = { headers: { ...headers } };
    if (json !== undefined) {
      init.body = typeof json === 'string' ? json : JSON.stringify(json);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    return this.send<T>(method, path, init);
  }

  private async send<T>(method: string, path: string, init: RequestInit): Promise<ApiResponse<T>> {
    const headers = new Headers(init.headers);
    if (this.bearer && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.bearer}`);
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const response = await fetch(url, { ...init, method, headers });
    const bytes = Buffer.from(await response.arrayBuffer());
    const type = response.headers.get('content-type') ?? '';
    let body: any = bytes;
    if (type.includes('application/json') && bytes.length > 0) body = JSON.parse(bytes.toString('utf8'));
    return { status: response.status, headers: response.headers, body, bytes };
  }
}
