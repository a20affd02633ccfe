/**
 * Calls to the app's own routes, as any client makes them: the function key the user pasted is
 * kept in sessionStorage (gone when the tab closes) and sent as `x-functions-key`, never in a
 * URL. Behind App Service Authentication the platform's session cookie goes along as well
 * (same origin), and ACCESS_POLICY names the caller by its principal and roles.
 */
const keyItem = 'management-gateway-console-key';

export const storedKey = (): string | null => sessionStorage.getItem(keyItem);
export const storeKey = (key: string): void => sessionStorage.setItem(keyItem, key);
export const forgetKey = (): void => sessionStorage.removeItem(keyItem);

/** The app's base (`…/api`): the page is `…/api/console`. */
const apiBase = location.origin + location.pathname.replace(/\/console\/?$/, '');

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiAnswer<T> {
  body: T;
  headers: Headers;
  status: number;
}

export async function call<T>(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  const key = storedKey();
  if (key) headers['x-functions-key'] = key;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${apiBase}/${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!response.ok && !(response.status === 503 && path === 'health')) {
    const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP ${response.status}`,
      error?.message ??
        (response.status === 401 ? 'The key was not accepted: sign out and paste a valid function key.' : `The app answered HTTP ${response.status}.`),
    );
  }
  return { body: body as T, headers: response.headers, status: response.status };
}

/** What the caller may do (GET console/session). */
export interface Session {
  caller: string;
  sees: 'all' | 'admin-scopes' | 'own';
  may: {
    terminate: boolean;
    purge: boolean;
    refreshCertificates: boolean;
    approve?: boolean;
    restart?: boolean;
    terminateMany?: boolean;
    restartMany?: boolean;
  };
  list: { pageSize: number; histogramMaxStarts: number };
  certificates: { alertDays: number; environments: { projectId: number; environmentId: string }[] } | null;
}

let lastSession: Session | undefined;

export const loadSession = async (): Promise<Session> => (lastSession = (await call<Session>('console/session')).body);

/** The session last loaded (the views given only part of it read the rest here). */
export const currentSession = (): Session | undefined => lastSession;
