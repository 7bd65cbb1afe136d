export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface ApiClient {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse<T>>;
  get<T = any>(path: string): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  del<T = any>(path: string): Promise<ApiResponse<T>>;
  /** Sends a raw body (for malformed-JSON and oversize tests). */
  raw(method: string, path: string, body: string | Buffer, headers?: Record<string, string>): Promise<ApiResponse<any>>;
}

async function toResponse(res: Response): Promise<ApiResponse<any>> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers, text };
}

// A request the service never answers fails the test naming it, instead of hanging until ava's inactivity
// timeout (which names the test, not the request). Generous: a loaded 2-core machine may be slow, never this slow.
const REQUEST_LIMIT_MS = 180_000;

export function apiClient(baseUrl: string, apiKey?: string): ApiClient {
  const auth = (): Record<string, string> => (apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` });
  const client: ApiClient = {
    baseUrl,
    apiKey,
    async call(method, path, body, headers = {}) {
      const init: RequestInit = {
        method,
        headers: { ...auth(), ...headers },
        signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
      };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        init.headers = { 'content-type': 'application/json', ...auth(), ...headers };
      }
      return toResponse(
        await fetch(`${baseUrl}${path}`, init).catch((e: Error) => {
          throw new Error(`fetch ${method} ${path}: ${String((e as { cause?: unknown }).cause ?? e)}`);
        }),
      ) as Promise<ApiResponse<never>>;
    },
    get: (path) => client.call('GET', path),
    post: (path, body) => client.call('POST', path, body),
    put: (path, body) => client.call('PUT', path, body),
    del: (path) => client.call('DELETE', path),
    async raw(method, path, body, headers = {}) {
      return toResponse(
        await fetch(`${baseUrl}${path}`, {
          method,
          body,
          signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
          headers: { 'content-type': 'application/json', ...auth(), ...headers },
        }),
      );
    },
  };
  return client;
}
